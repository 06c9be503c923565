"""Costs from a price table the user can edit (`configs/prices.toml`), and token estimates.

Costs are per call from the usage the provider reported; `estimate_tokens` serves dry runs and the
budget check before a call is made, where no usage exists yet.
"""

from __future__ import annotations

import functools
import math
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, RootModel

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.models.base import TokenCounter
from judgebench.models.provider_registry import ModelSpec, traits_of
from judgebench.records import Usage
from judgebench.records.numbers import USER_NUMBERS, NonNegative

_SNAPSHOT = re.compile(r"^-\d")
# More tokens than any model's context and output hold in one call: a count past this is not a count.
MAX_CALL_TOKENS = 10_000_000


def reported_tokens(value: Any) -> int:
    """A token count as a provider reported it, read without failing: a finite number as an int
    (negative kept, for `usage_problem` to refuse), nothing at all as 0, anything else (infinity,
    NaN, text, a bool) as -1. A reply's usage must never make its paid answer fail to parse."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return -1
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else -1
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return -1


def usage_problem(usage: Usage) -> str | None:
    """Why `usage` cannot be priced (a negative count, or one past `MAX_CALL_TOKENS`), or None.
    A negative count would make a call cost negative money and lift `--max-cost`."""
    for name, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
        if count < 0 or count > MAX_CALL_TOKENS:
            return f"{name} tokens reported as {count}, not a count of one call"
    return None


class Price(BaseModel):
    """USD per 1M tokens."""

    model_config = USER_NUMBERS  # a NaN price would make every budget check pass

    input: NonNegative
    output: NonNegative
    batch_input: NonNegative | None = None
    batch_output: NonNegative | None = None

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        rate_in = self.batch_input if batch and self.batch_input is not None else self.input
        rate_out = self.batch_output if batch and self.batch_output is not None else self.output
        return (usage.input_tokens * rate_in + usage.output_tokens * rate_out) / 1_000_000


class PricesFile(RootModel[dict[str, dict[str, Price]]]):
    """configs/prices.toml: `[PROVIDER."MODEL"]` tables of prices."""


class PriceTable:
    """Prices by provider and model, with snapshot-prefix and per-provider wildcard lookup."""

    def __init__(self, prices: dict[str, dict[str, Price]], *, source: str | None = None) -> None:
        self.prices = prices
        self.source = source

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """Read a prices TOML (default `configs/prices.toml`); a missing default file means no prices."""
        explicit = path is not None
        file = Path(path) if path is not None else configs_dir() / "prices.toml"
        if not explicit and not file.exists():
            return cls({}, source=None)
        prices = load_config(file, PricesFile).root
        return cls(prices, source=str(file))

    def price(self, provider: str, model: str) -> Price | None:
        table = self.prices.get(provider)
        if not table:
            return None
        if model in table:
            return table[model]
        best: str | None = None
        for known in table:
            snapshot = known != "*" and model.startswith(known) and _SNAPSHOT.match(model[len(known) :])
            if snapshot and (best is None or len(known) > len(best)):
                best = known
        if best is not None:
            return table[best]
        return table.get("*")

    def cost(self, provider: str, model: str, usage: Usage, batch: bool = False) -> float | None:
        """USD for `usage`, or None when the model has no price."""
        price = self.price(provider, model)
        return None if price is None else price.cost(usage, batch=batch)


# --- token estimates ------------------------------------------------------------------------------

TokenMethod = TokenCounter
# model names that tiktoken knows whoever serves them (an OpenAI model behind another provider)
_OPENAI_MODEL_PREFIXES = ("gpt-", "o1", "o3", "o4")


@functools.lru_cache(maxsize=16)
def _encoding(model: str) -> Any:
    """tiktoken's encoding for an OpenAI model, or None (unknown model, BPE file not downloadable)."""
    if os.environ.get("JUDGEBENCH_OFFLINE_TESTS") == "1":
        return None
    try:
        import tiktoken  # lazily: optional, and slow to import; only dry runs and budgets need it

        try:
            return tiktoken.encoding_for_model(model)
        except KeyError:
            return tiktoken.get_encoding("o200k_base")
    except Exception:  # offline, no cached BPE file, or tiktoken missing: fall back, never crash
        return None


def _is_cjk(ch: str) -> bool:
    name = unicodedata.east_asian_width(ch)
    return name in ("W", "F") and not ch.isspace()


def heuristic_tokens(text: str) -> int:
    """~1 token per CJK (wide) character, ~4 characters per token for the rest."""
    cjk = sum(1 for ch in text if ord(ch) > 0x2E7F and _is_cjk(ch))
    other = len(text) - cjk
    return cjk + (other + 3) // 4


def estimate_tokens_with_method(text: str, model_spec: ModelSpec | str) -> tuple[int, TokenMethod]:
    """Token count of `text` for the model and how it was counted."""
    spec = ModelSpec.parse(model_spec) if isinstance(model_spec, str) else model_spec
    if traits_of(spec).token_counter == "tiktoken" or spec.model.startswith(_OPENAI_MODEL_PREFIXES):
        encoding = _encoding(spec.model)
        if encoding is not None:
            return len(encoding.encode(text, disallowed_special=())), "tiktoken"
    return heuristic_tokens(text), "heuristic"


def estimate_tokens(text: str, model_spec: ModelSpec | str) -> int:
    """Token count of `text` for the model: tiktoken for OpenAI models when its BPE file is available,
    else `heuristic_tokens` (chars/4 for Latin text, 1 per CJK character)."""
    return estimate_tokens_with_method(text, model_spec)[0]
