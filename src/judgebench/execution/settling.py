"""`judge --until-settled`: judge whole items in rounds and stop each judge once its verdicts are known.

The execution room's loop (issue 25 moved it out of api/): it decides which planned calls to make
next, makes them with `execute_plan`, and asks `analysis.sequential` after each round whether each
judge is settled; `api.judge` only wires it to the run folder and the manifest (`on_round`).

Items are taken in a seeded, subset-stratified random order; a round plans and runs every call of
the next `round_items` items (both orders, every condition, tie-probes) for each judge still going,
so pairs stay complete and a batch round is one provider batch. After each round the anytime-valid
confidence sequences of `analysis.sequential` are updated from the run's judgments; a judge stops
when every one of its verdicts is decided (settled) or the items run out. `plan.jsonl` holds only
the calls of the rounds planned, so a settled judge's remaining items are not "never made".

Resumable: the order is a function of the seed, calls already answered are not asked again, and the
manifest records each judge's position after every round (`running` until it stops), so a killed
run is known to be interrupted and its readiness is not complete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from judgebench.analysis.findings import SOURCE, ReportSettings
from judgebench.analysis.frame import rows_frame
from judgebench.analysis.sequential import Settlement, item_values, settle, stratified_order
from judgebench.execution import Execution, execute_plan, pending_calls
from judgebench.judge.call_plan import PlannedCall
from judgebench.judge.templates import JudgeTemplate
from judgebench.models.client import ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records import CallKey
from judgebench.records.manifest import SequentialCheck, SequentialStop
from judgebench.records.outcomes import JudgeOutcome
from judgebench.store.answers_log import Answer, JudgmentLog
from judgebench.store.run_folder import RunDir

OnRound = Callable[[Sequence[PlannedCall], Mapping[str, SequentialStop]], None]


def merge_outcomes(a: JudgeOutcome | None, b: JudgeOutcome) -> JudgeOutcome:
    """Totals of two rounds of one judge (the failures are those of the latest round)."""
    if a is None:
        return b
    fields = ("planned", "already_done", "requested", "verdicts", "invalid", "cache_hits", "provider_calls")
    summed = {f: getattr(a, f) + getattr(b, f) for f in fields}
    return JudgeOutcome(
        **summed,
        missing=b.missing,
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        cost_usd=round(a.cost_usd + b.cost_usd, 6),
        unpriced_calls=a.unpriced_calls + b.unpriced_calls,
        failures=b.failures,
        stopped=b.stopped or a.stopped,
    )


def _stop(
    s: Settlement, reason: str, *, total: int, calls: int, full: int, seed: int, round_items: int, conf: float
) -> SequentialStop:
    checks = [
        SequentialCheck(
            name=c.quantity.name,
            condition=c.quantity.target,
            limit=c.quantity.limit,
            n=c.n,
            estimate=c.estimate,
            low=c.low,
            high=c.high,
            state=c.state,
        )
        for c in s.checks
    ]
    return SequentialStop(
        reason=reason,  # type: ignore[arg-type]
        items=s.items,
        items_total=total,
        calls=calls,
        calls_full=full,
        seed=seed,
        round_items=round_items,
        confidence=conf,
        verdicts=dict(s.verdicts),
        checks=checks,
    )


@dataclass(frozen=True)
class Rounds:
    """How judging proceeds until settled: the seed of the item order and the items per round."""

    seed: int
    items: int
    # the limits the verdicts are settled against (the report's defaults unless given)
    settings: ReportSettings = field(default_factory=ReportSettings)


def answers_frame(answers: Iterable[Answer]) -> pd.DataFrame:
    """`analysis.frame.judgment_frame` of the records these answers stand for: the same columns,
    rows and values, from the light `Answer`s of judgments.jsonl."""
    return rows_frame(
        (
            a.judge,
            a.item_id,
            a.subset,
            a.kind,
            a.condition,
            a.order,
            a.verdict,
            a.winner,
            a.label,
            a.confidence,
            a.input_tokens,
            a.output_tokens,
            a.cost_usd,
        )
        for a in answers
    )


class _ItemRows:
    """The run's last answers for chosen items, without framing the whole run each round: an item's
    values (`item_values`) are those of its own rows, and a judge settles over the items judged so
    far, so each round frames only those. The keys per item are taken from the index once (again
    only when it re-read the file) and from the plan for what this command appends."""

    def __init__(self, judgments: JudgmentLog, by_item: Mapping[tuple[str, str], Sequence[PlannedCall]]):
        self.judgments = judgments
        self.planned: dict[str, list[CallKey]] = {}
        for (_judge, item), calls in by_item.items():
            self.planned.setdefault(item, []).extend(c.key for c in calls)
        self.held: dict[str, list[CallKey]] = {}
        self.read = -1
        self.en_pair = False

    def _fresh(self) -> Mapping[CallKey, Answer]:
        latest = self.judgments.latest()
        if self.read != self.judgments.reads:
            self.held = {}
            for key in latest:
                self.held.setdefault(key.item_id, []).append(key)
            self.read = self.judgments.reads
            self.en_pair = False
        return latest

    def of(self, items: Sequence[str]) -> list[Answer]:
        latest = self._fresh()
        keys = dict.fromkeys(k for i in items for k in (*self.held.get(i, ()), *self.planned.get(i, ())))
        return [latest[k] for k in keys if k in latest]

    def any_en(self) -> bool:
        """Whether the run holds an en pair answer (what `item_values` of all of it needs to be
        non-empty); once it does, it always will."""
        if not self.en_pair:
            latest = self._fresh()
            self.en_pair = any(a.kind == "pair" and a.condition == SOURCE for a in latest.values())
        return self.en_pair


def judge_until_settled(
    run: RunDir,
    plan: Sequence[PlannedCall],
    clients: Mapping[str, ModelClient],
    template: JudgeTemplate,
    *,
    execution: Execution,
    progress: ProgressReporter,
    rounds: Rounds,
    on_round: OnRound,
) -> tuple[dict[str, JudgeOutcome], dict[str, SequentialStop], list[PlannedCall]]:
    """Run `plan` (the full design) in rounds until every judge is settled or out of items.

    `on_round(planned, stops)` is called before each round's calls (with the calls planned so far,
    to record in plan.jsonl and the manifest) and once at the end; the calls are counted on `progress`
    (the stage's, opened by the runner). Returns the per-judge totals, the stops and the calls planned."""
    settings = rounds.settings
    seed, round_items = rounds.seed, rounds.items
    subsets = {c.item_id: c.subset for c in plan if c.kind == "pair"}
    order = stratified_order(subsets, seed)
    targets = list(dict.fromkeys(c.condition for c in plan if c.kind == "pair" and c.condition != SOURCE))
    by_item: dict[tuple[str, str], list[PlannedCall]] = {}
    for call in plan:
        by_item.setdefault((call.judge, call.item_id), []).append(call)
    full = {name: sum(1 for c in plan if c.judge == name) for name in clients}
    defaults = {name: client.request_defaults for name, client in clients.items()}
    judgments = run.judgments()  # read once; each round's answers join it as they are appended
    stops: dict[str, SequentialStop] = {}
    outcomes: dict[str, JudgeOutcome] = {}
    planned: list[PlannedCall] = []
    active = list(clients)
    position = 0

    rows = _ItemRows(judgments, by_item)

    def values(k: int) -> pd.DataFrame:
        return item_values(answers_frame(rows.of(order[:k])), targets)

    def account(name: str, k: int, reason: str, table: pd.DataFrame) -> None:
        judged = order[:k]
        # as over every judgment of the run: nothing to settle on while it holds no en pair answer
        s = settle(table, name, targets, settings, judged) if rows.any_en() else Settlement(name, 0, {})
        calls = sum(len(by_item.get((name, i), [])) for i in judged)
        stops[name] = _stop(
            s, reason, total=len(order), calls=calls, full=full[name], seed=seed,
            round_items=round_items, conf=settings.confidence,
        )  # fmt: skip

    async def go() -> None:
        nonlocal position, active
        try:
            while active and position < len(order):
                items = order[position : position + round_items]
                batch = [c for name in active for i in items for c in by_item.get((name, i), [])]
                planned.extend(batch)
                table = values(position)
                for name in active:
                    account(name, position, "running", table)
                on_round(planned, stops)
                if pending_calls(batch, judgments.latest()):
                    got = await execute_plan(
                        batch, {n: clients[n] for n in active}, template, judgments,
                        progress=progress, request_defaults=defaults, execution=execution,
                    )  # fmt: skip
                    for name, outcome in got.items():
                        outcomes[name] = merge_outcomes(outcomes.get(name), outcome)
                position += len(items)
                table = values(position)
                if pending_calls(batch, judgments.latest()):
                    for name in active:
                        account(name, position, "interrupted", table)
                    return  # failed or unaffordable calls: a rerun resumes here
                still = []
                for name in active:
                    account(name, position, "running", table)
                    if stops[name].decided:
                        account(name, position, "settled", table)
                    elif position >= len(order):
                        account(name, position, "items exhausted", table)
                    else:
                        still.append(name)
                active = still
        finally:
            for client in clients.values():
                await client.aclose()

    asyncio.run(go())
    on_round(planned, stops)
    return outcomes, stops, planned
