"""What a call produced (`CallResult`) and what a client's calls came to (`ClientStats`).

Live calls (`ModelClient`), Batch API answers (`judgebench.batch`) and imported batch files all end
in a `CallResult` and count it through the same `ClientStats.record_*` methods, so the manifest's
totals mean the same thing whichever way the calls went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from judgebench.models.base import ModelResponse, TokenLogprob
from judgebench.records.sanitize import lone_surrogate_at, replace_surrogates

if TYPE_CHECKING:
    from judgebench.progress import ProgressReporter

__all__ = ["CallResult", "ClientStats", "Refusal", "advance_progress", "kept_answer"]

# Why a call was not sent, by judgebench's own choice (the result's `error` says it in words):
# "budget": it would have passed --max-cost; "deferred": batch rounds answer it in the next batch;
# "offline": the test-suite guard (JUDGEBENCH_OFFLINE_TESTS=1) keeps it from a real host;
# "key": the server rejected the key on several calls in a row, so no more are sent (`ModelClient`).
Refusal = Literal["budget", "deferred", "offline", "key"]


class CallResult(BaseModel):
    """The outcome of one logical call: an answer (possibly from the store) or why there is none."""

    cache_key: str
    prompt_hash: str
    response: ModelResponse | None
    error: str | None = None
    # set when the call was never sent (see `Refusal`); `error` keeps the human text
    refused: Refusal | None = None
    from_cache: bool = False
    attempts: int = 0
    cost_usd: float | None = None
    params_sent: dict[str, Any] = Field(default_factory=dict)
    # set for answers that came through a provider Batch API (judgebench.batch); None for live calls
    batch_id: str | None = None
    custom_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.response is not None


class ClientStats(BaseModel):
    """Totals for the manifest. Tokens and cost count only answers paid for in this session."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    budget_refusals: int = 0
    status_counts: dict[str, int] = Field(default_factory=dict)

    def record_calls(self, n: int = 1) -> None:
        """`n` logical calls were asked for (answered from the store, paid, or failed)."""
        self.calls += n

    def record_cache_hit(self) -> None:
        self.cache_hits += 1

    def record_answer(self, response: ModelResponse, cost: float | None) -> None:
        """An answer paid for in this session: its tokens, and its cost (None: no price known)."""
        self.input_tokens += response.usage.input_tokens
        self.output_tokens += response.usage.output_tokens
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += cost

    def record_failure(self) -> None:
        self.failures += 1

    def record_refusal(self) -> None:
        """A call refused by the budget: a failed call, counted as a refusal too."""
        self.budget_refusals += 1
        self.failures += 1

    def record_retries(self, attempts: int) -> None:
        """A call took `attempts` attempts: all but the first were retries."""
        self.retries += max(0, attempts - 1)

    def record_status(self, status: str) -> None:
        """One attempt ended as `status` ("ok", an HTTP code, "timeout", "malformed", ...)."""
        self.status_counts[status] = self.status_counts.get(status, 0) + 1

    def record_result(self, result: CallResult) -> None:
        """Count one finished call by what it is: a store hit, a paid answer, a refusal or a failure."""
        if result.response is None:
            if result.refused == "budget":
                self.record_refusal()
            else:
                self.record_failure()
        elif result.from_cache:
            self.record_cache_hit()
        else:
            self.record_answer(result.response, result.cost_usd)


def advance_progress(progress: ProgressReporter | None, result: CallResult) -> None:
    """Move a progress bar on by one finished call (tokens and cost only for paid answers)."""
    if progress is None:
        return
    paid = result.response is not None and not result.from_cache
    usage = result.response.usage if paid and result.response is not None else None
    progress.advance(
        tokens=(usage.input_tokens + usage.output_tokens) if usage else 0,
        cost=result.cost_usd if paid else 0.0,
        cached=result.from_cache,
        failed=result.response is None,
    )


def _clip_strings(value: Any, cap: int) -> Any:
    """`value` (a JSON body) with every string longer than `cap` characters cut to `cap`."""
    if isinstance(value, str):
        return value[:cap] if len(value) > cap else value
    if isinstance(value, list):
        return [_clip_strings(v, cap) for v in value]
    if isinstance(value, dict):
        return {k: _clip_strings(v, cap) for k, v in value.items()}
    return value


def kept_answer(response: ModelResponse, cap: int) -> ModelResponse:
    """A received answer as it is stored and recorded: lone surrogates (which no UTF-8 file or
    SQLite store can hold) replaced by U+FFFD, the text cut to `cap` characters (its length before
    the cut and the cap recorded) and the raw body's strings cut likewise."""
    text = response.text
    raw = response.raw
    tainted = lone_surrogate_at(text) is not None
    if raw is not None and not tainted:
        tainted = any(lone_surrogate_at(s) is not None for s in _strings(raw))
    long = len(text) > cap
    if not tainted and not long:
        return response
    update: dict[str, Any] = {}
    if tainted:
        text = replace_surrogates(text)
        raw = replace_surrogates(raw)
        if response.logprobs:
            update["logprobs"] = [
                TokenLogprob(
                    token=replace_surrogates(t.token), logprob=t.logprob, top=replace_surrogates(t.top)
                )
                for t in response.logprobs
            ]
    if long:
        update.update(text_chars=len(text), text_cap=cap)
        text = text[:cap]
        raw = _clip_strings(raw, cap) if raw is not None else None
    return response.model_copy(update={**update, "text": text, "raw": raw})


def _strings(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out
