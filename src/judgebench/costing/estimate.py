"""What a --dry-run prints: calls, tokens and cost of a stage, live and batch, before anything is paid."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel

from judgebench.costing.durations import after_judging, expected
from judgebench.costing.output_tokens import OutputTokenTable, load_table, output_tokens_for
from judgebench.judge.call_plan import PlannedCall
from judgebench.judge.templates import JudgeTemplate
from judgebench.models import Judges, JudgeSpec
from judgebench.models.base import ModelRequest
from judgebench.models.pricing import estimate_tokens_with_method
from judgebench.models.provider_registry import ModelSpec
from judgebench.records import Condition, Item, Usage
from judgebench.translate.translator import (
    TranslatorSettings,
    needs_pieces,
    piece_budget,
    planned_messages,
)


class Estimate(BaseModel):
    """One stage and model of a dry run: calls still to make, their tokens and cost."""

    stage: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    token_method: str
    cost_live_usd: float | None
    cost_batch_usd: float | None
    already_done: int = 0
    # where the output tokens per call come from (judging: costing/output_tokens.py)
    output_source: str | None = None
    # the expected wall time of these calls and what it rests on (costing/durations.py)
    seconds: float | None = None
    seconds_source: str | None = None
    # why this many calls (translation: one per item for all conditions, long items in pieces)
    detail: str | None = None

    def scaled(self, calls: int, already_done: int) -> Estimate:
        """The same per-call figures for another number of calls (a plan known only in part)."""
        share = calls / self.calls if self.calls else 0.0
        return self.model_copy(
            update={
                "calls": calls,
                "already_done": already_done,
                "input_tokens": int(self.input_tokens * share),
                "output_tokens": int(self.output_tokens * share),
                "cost_live_usd": None if self.cost_live_usd is None else self.cost_live_usd * share,
                "cost_batch_usd": None if self.cost_batch_usd is None else self.cost_batch_usd * share,
                "seconds": None if self.seconds is None else self.seconds * share,
            }
        )


def priced(stage: str, judge: JudgeSpec, usage: Usage, *, calls: int, method: str, done: int) -> Estimate:
    """An estimate with the judge's live and batch prices (configs/prices.toml; None: unpriced)."""
    price = judge.price
    return Estimate(
        stage=stage,
        model=judge.name,
        calls=calls,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        token_method=method,
        cost_live_usd=None if price is None else price.cost(usage),
        cost_batch_usd=None if price is None else price.cost(usage, batch=True),
        already_done=done,
    )


def _timed(estimate: Estimate, judge: JudgeSpec, stage: str) -> Estimate:
    """The estimate with its expected wall time at the judge's pace (its settings: flags over
    judges.toml over the defaults)."""
    took = expected(
        judge.name,
        judge.spec,
        judge.settings,
        estimate.calls,
        stage,
        output_tokens=estimate.output_tokens,
        input_tokens=estimate.input_tokens,
    )
    return estimate.model_copy(update={"seconds": took.seconds, "seconds_source": took.source})


def estimate_translation(
    items: Sequence[Item],
    conditions: Sequence[Condition],
    translator: JudgeSpec,
    done: int,
    settings: TranslatorSettings | None = None,
) -> Estimate:
    """Calls and tokens of translating `items` when every answer is valid (re-asks not counted)."""
    settings = settings or TranslatorSettings()
    spec = translator.spec
    calls = 0
    usage = Usage()
    method = "heuristic"
    pieced: list[int] = []  # calls of the items translated field by field, in pieces
    for item in items:
        planned = planned_messages(item, conditions, settings)
        if needs_pieces(item, conditions, settings):
            pieced.append(len(planned))
        for messages in planned:
            calls += 1
            n, method = estimate_tokens_with_method("\n".join(m.content for m in messages), spec)
            usage.input_tokens += n
    usage.output_tokens = translation_output_tokens(items, conditions, spec)
    # a translator is named by its spec in the estimate, as the translate stage records it
    estimate = priced("translate", translator, usage, calls=calls, method=method, done=done)
    detail = _why_calls(len(items), conditions, pieced, piece_budget(settings, conditions))
    return _timed(estimate, translator, "translate").model_copy(update={"model": spec.text, "detail": detail})


def translation_output_tokens(
    items: Sequence[Item], conditions: Sequence[Condition], spec: ModelSpec
) -> int:
    """The tokens of the translations of `items`: a CJK rendering of English text takes about as many
    tokens as the source, +20% for the JSON around it."""
    total = 0
    for item in items:
        body = item.instruction + item.output_1 + item.output_2
        total += int(estimate_tokens_with_method(body, spec)[0] * len(conditions) * 1.2)
    return total


def _why_calls(items: int, conditions: Sequence[Condition], pieced: Sequence[int], budget: int) -> str:
    """Why a translation makes the calls it makes (not items x conditions: 419 items into zh and ls
    are about 500 calls, not 838)."""
    names = ", ".join(c.name for c in conditions)
    whole = items - len(pieced)
    text = f"{items:,} item(s) into {names}: one call per item answers for every condition at once"
    if pieced:
        text += (
            f" ({whole:,} items); {len(pieced):,} long item(s) go field by field in pieces of at most "
            f"{budget:,} characters ({sum(pieced):,} calls)"
        )
    return text + "; a re-ask of an unreadable answer is one call more"


def prompt_text(request: ModelRequest) -> str:
    """The text a judge reads: the prompt, or the messages one after another (for counting tokens)."""
    return request.prompt or "\n".join(m.content for m in request.messages or [])


def estimate_judging(
    plan: Sequence[PlannedCall],
    todo: Sequence[PlannedCall],
    template: JudgeTemplate,
    judges: Iterable[JudgeSpec],
    *,
    catalog: Judges,
    observed: Mapping[tuple[str, str], tuple[float, int]] | None = None,
    table: OutputTokenTable | None = None,
) -> list[Estimate]:
    """Per judge: the calls of `todo` (the pending part of `plan`) with their tokens and cost. The
    replies are costed per judge and template (`output_tokens_for`; `observed`: a run's own means;
    `catalog`: the command's judges, which name the judges of those figures)."""
    table = table or load_table()
    out: list[Estimate] = []
    for judge in judges:
        completion = judge.traits.completion_only
        mine = [c for c in todo if c.judge == judge.name]
        reply = output_tokens_for(judge, template, catalog=catalog, observed=observed, table=table)
        usage = Usage(output_tokens=round(reply.per_judgment * len(mine)))
        method = "heuristic"
        for call in mine:
            request = template.render(
                instruction=call.instruction,
                output_a=call.output_a,
                output_b=call.output_b,
                language=call.language,
                completion=completion,
            )
            n, method = estimate_tokens_with_method(prompt_text(request), judge.spec)
            usage.input_tokens += n
        done = sum(1 for c in plan if c.judge == judge.name) - len(mine)
        estimate = _timed(
            priced("judge", judge, usage, calls=len(mine), method=method, done=done), judge, "judge"
        )
        out.append(estimate.model_copy(update={"output_source": reply.source}))
    return out


def after_judging_estimates(judgments: int) -> list[Estimate]:
    """bbe and report on a run of `judgments` judgments: no call, no cost, but time a run waits
    for (a probes run said "about 1s" and took 59 s with them)."""
    out = []
    for stage in ("bbe", "report"):
        timed = after_judging(stage, judgments)
        if timed is None:
            continue
        out.append(
            Estimate(
                stage=stage,
                model="(no calls)",
                calls=0,
                input_tokens=0,
                output_tokens=0,
                token_method="-",
                cost_live_usd=0.0,
                cost_batch_usd=0.0,
                seconds=timed[0],
                seconds_source=timed[1],
                detail=f"{judgments:,} judgments",
            )
        )
    return out

