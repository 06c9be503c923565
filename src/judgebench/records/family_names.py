"""Model families (issue 31, self-preference): the maker behind an answer or a judge, by name.

Pure: the table is read by its callers (models/family_table.py reads configs/model_families.toml), so the
simulated judge and the analysis match names the same way. The models behind an item's answers are
the `chosen_model` / `rejected_model` its loader kept in `metadata` (RewardBench, M-RewardBench and
any user file with those columns): no new item field, so every items file stays valid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from judgebench.records.items import Item

CHOSEN_MODEL = "chosen_model"
REJECTED_MODEL = "rejected_model"
# the models behind output_1 and output_2 by position (imported logs: Arena-Hard, MT-Bench, AlpacaEval)
MODEL_1 = "model_1"
MODEL_2 = "model_2"


def bare_name(name: str) -> str:
    """`meta-llama/Llama-2-70b-chat-hf` -> `llama-2-70b-chat-hf`: lower case, no organisation."""
    return name.strip().lower().rsplit("/", 1)[-1]


@dataclass(frozen=True)
class FamilyTable:
    """Shell-style patterns on bare model names (first match wins) and each provider's family."""

    patterns: tuple[tuple[str, str], ...] = ()
    providers: Mapping[str, str] = field(default_factory=dict)

    def of_model(self, name: str | None) -> str | None:
        """The family of a model name; None for no name or one no pattern matches (`human`)."""
        if not name or not name.strip():
            return None
        bare = bare_name(name)
        return next((family for pattern, family in self.patterns if fnmatchcase(bare, pattern)), None)

    def of_judge(self, provider: str, model: str) -> str | None:
        """A judge's family: its model's, else its provider's (`openai:ft:my-tune` is openai)."""
        return self.of_model(model) or self.providers.get(provider)


def answer_models(item: Item) -> tuple[str | None, str | None]:
    """The models behind output_1 and output_2: `model_1`/`model_2` where the item names them by
    position, else from its chosen/rejected model and its label; (None, None) when it names neither."""

    def text(key: str) -> str | None:
        value = item.metadata.get(key)
        return value.strip() if isinstance(value, str) and value.strip() else None

    first, second = text(MODEL_1), text(MODEL_2)
    if first or second:  # an imported pair names its answers' models by position (labelled or not)
        return first, second
    chosen, rejected = text(CHOSEN_MODEL), text(REJECTED_MODEL)
    if item.label == 1:
        return chosen, rejected
    if item.label == 2:
        return rejected, chosen
    return None, None
