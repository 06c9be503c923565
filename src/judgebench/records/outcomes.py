"""What one stage invocation did, in totals: shown at the end of a command and kept in the manifest."""

from __future__ import annotations

from pydantic import BaseModel

from judgebench.records.items import TranslationFailure


class TranslateOutcome(BaseModel):
    """Totals of one `translate` invocation (imports have none: nothing is called)."""

    items: int
    conditions: list[str]
    already_done: int
    translated: int
    failed: list[TranslationFailure]
    provider_calls: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    # provider calls with no price in configs/prices.toml (their cost is not in cost_usd)
    unpriced_calls: int = 0


class CallFailure(BaseModel):
    """A planned call left without a verdict: `key` is item/kind/condition/order."""

    key: str
    error: str


class JudgeOutcome(BaseModel):
    """Totals of one `judge` invocation for one judge."""

    planned: int
    already_done: int
    requested: int
    verdicts: int
    invalid: int
    missing: int
    cache_hits: int
    provider_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    failures: list[CallFailure]
    # provider calls with no price in configs/prices.toml (their cost is not in cost_usd)
    unpriced_calls: int = 0
    # set when the judge's key was rejected on several calls in a row and the rest were not sent:
    # the one message that names the provider and its key variable (a rerun resumes them)
    stopped: str | None = None
    # of `failures`, the calls never sent because the client stopped (`stopped`): not failed calls
    unsent: int = 0
