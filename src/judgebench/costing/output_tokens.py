"""Output tokens per judgment, by judge and template: what cost estimates charge for a reply.

The reply is the part of a judgment's cost a template decides (a reason is 60-80 tokens, a bare
verdict about 15), so estimates must not charge one fixed figure for every template. Figures come,
in this order, from a finished run's own judgments (`plan --from-run`), from measurements stored in
configs/output_tokens.toml by scripts/bench_output_tokens.py, from a completion-only judge's
one-letter completion form, and from the file's stated assumptions; each figure names its source.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.errors import InputError
from judgebench.judge.templates import JudgeTemplate
from judgebench.models import Judges, JudgeSpec
from judgebench.records import CallKey
from judgebench.records.numbers import USER_NUMBERS
from judgebench.store.answers_log import Answer
from judgebench.store.run_folder import RunDir

# The line below which scripts/bench_output_tokens.py --write rewrites configs/output_tokens.toml.
MEASURED_MARKER = (
    "# --- measured by scripts/bench_output_tokens.py (rewritten by --write; edit above this line) ---"
)
# The completion form asks for this many tokens (JudgeTemplate.render): a verdict letter.
COMPLETION_TOKENS = 2


class MeasuredEntry(BaseModel):
    model_config = USER_NUMBERS

    judge: str
    template: str
    output_tokens: float = Field(ge=0)
    judgments: int = Field(ge=1)
    max: int | None = None
    ran_to_max_tokens: float | None = None
    measured: str = ""


class OutputTokenTable(BaseModel):
    model_config = USER_NUMBERS

    assumed: dict[str, float]
    measured: list[MeasuredEntry] = Field(default_factory=list)

    @field_validator("assumed")
    @classmethod
    def _default(cls, assumed: dict[str, float]) -> dict[str, float]:
        if "default" not in assumed:
            raise ValueError("[assumed] needs a 'default' figure")
        return assumed


class OutputTokens(BaseModel):
    """Output tokens per judgment for one judge and template, and where the figure comes from."""

    judge: str
    template: str
    per_judgment: float
    source: str


def measured_path() -> Path:
    return configs_dir() / "output_tokens.toml"


def load_table(path: Path | None = None) -> OutputTokenTable:
    """configs/output_tokens.toml (or `path`), read afresh: a --write in the same process shows."""
    return load_config(path or measured_path(), OutputTokenTable)


def run_figures(run: RunDir | str | Path) -> dict[tuple[str, str], tuple[float, int]]:
    """(judge, template name) -> (mean output tokens per judgment, judgments) over a run's answered
    judgments. A judgment's tokens are those of its first answer and of every re-ask it took
    (`judge --reask`): the re-asks are paid for too. A line written again for the same answer (a
    resumed or repeated stage) counts once. From the lines the run's judgments index already read
    (`RunDir.judgments().lines()`): a stage that planned from them reads the file no second time."""
    index = (run if isinstance(run, RunDir) else RunDir(run)).judgments()
    if not index.path.exists():
        raise InputError("the run has no judgments to measure replies from", path=str(index.path))
    answers: dict[tuple[CallKey, int], Answer] = {}  # the last line per answer (call key, re-ask)
    for j in index.lines():
        if j.has_raw and j.output_tokens is not None and j.template:
            answers[(j.call_key(), j.reask)] = j
    per_call: dict[CallKey, list[Answer]] = defaultdict(list)
    for (call, _reask), j in answers.items():
        per_call[call].append(j)
    tokens: dict[tuple[str, str], list[int]] = defaultdict(list)
    for lines in per_call.values():
        first = min(lines, key=lambda j: j.reask)
        paid = sum(j.output_tokens for j in lines if j.output_tokens is not None)
        tokens[(first.judge, str(first.template))].append(paid)
    return {key: (statistics.fmean(v), len(v)) for key, v in tokens.items()}


def _same_model(name: str, judge: JudgeSpec, catalog: Judges) -> bool:
    """A judge name (of a run or of the table) for the judge's provider and model (`local` and
    `local:gemma3-270m`, a judges.toml name and its spec); a name that resolves to none matches none."""
    return name == judge.name or catalog.same_model(name, judge.name)


def _observed_for(
    judge: JudgeSpec, template: str, observed: Mapping[tuple[str, str], tuple[float, int]], catalog: Judges
) -> tuple[float, int] | None:
    """The run's figure for this judge and template: its own name first, else the same model's."""
    if (judge.name, template) in observed:
        return observed[(judge.name, template)]
    return next(
        (v for (j, t), v in observed.items() if t == template and _same_model(j, judge, catalog)), None
    )


def output_tokens_for(
    judge: JudgeSpec,
    template: JudgeTemplate,
    *,
    catalog: Judges,
    observed: Mapping[tuple[str, str], tuple[float, int]] | None = None,
    table: OutputTokenTable | None = None,
) -> OutputTokens:
    """The output tokens one judgment of `judge` with `template` is costed at, and why."""
    table = table or load_table()
    name = judge.name
    found = _observed_for(judge, template.name, observed or {}, catalog)
    if found is not None:
        mean, n = found
        return OutputTokens(
            judge=name, template=template.name, per_judgment=mean, source=f"the run's {n} judgments"
        )
    for entry in table.measured:
        if entry.template == template.name and _same_model(entry.judge, judge, catalog):
            return OutputTokens(
                judge=name,
                template=template.name,
                per_judgment=entry.output_tokens,
                source=f"measured, {entry.judgments} judgments ({entry.measured})".replace(" ()", ""),
            )
    # without a completion form a base model gets the chat form
    if judge.traits.completion_only and template.completion:
        return OutputTokens(
            judge=name,
            template=template.name,
            per_judgment=COMPLETION_TOKENS,
            source="the completion form's verdict letter",
        )
    figure = table.assumed.get(template.name)
    basis = template.name if figure is not None else "default"
    per = min(figure if figure is not None else table.assumed["default"], template.max_tokens)
    return OutputTokens(judge=name, template=template.name, per_judgment=per, source=f"assumed ({basis})")
