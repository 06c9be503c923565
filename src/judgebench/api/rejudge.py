"""New bbe neighbours: perturb sampled units of one judge and judge them through the judge stage's
execution (cache, budget, batch, progress, resume), into the run's `bbe_neighbours.jsonl`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from judgebench.api.options import CallOptions
from judgebench.bbe.neighbours import perturb_item
from judgebench.errors import InputError
from judgebench.execution import Execution, execute_plan, pending_calls
from judgebench.judge.plan import PlannedCall
from judgebench.judge.templates import load_template
from judgebench.models.pricing import PriceTable
from judgebench.progress import ProgressReporter
from judgebench.records import Item, Judgment, Perturbation, UnitKey
from judgebench.rundir import RunDir


class RejudgeOutcome(BaseModel):
    """What re-judging asked for: in bbe.json's `source.perturbation`."""

    kind: str
    model: str
    units_sampled: int
    requested: int
    failed_calls: int
    unperturbable: int
    file: str


def perturbed_calls(
    items: Mapping[str, Item], units: Sequence[UnitKey], *, kind: str, judge: str, seed: int
) -> tuple[list[PlannedCall], int]:
    """One call per perturbable unit (the same seed gives the same texts, so reruns hit the cache),
    and how many units nothing could change."""
    calls: list[PlannedCall] = []
    unperturbable = 0
    for item_id, order in units:
        item = items.get(item_id)
        if item is None:
            raise InputError(f"item '{item_id}' of the run is not in the dataset", item=item_id)
        rng = np.random.default_rng([seed, *item_id.encode("utf-8"), 0 if order == "orig" else 1])
        p = perturb_item(item, kind, rng)
        if p is None:
            unperturbable += 1
            continue
        a, b = (p.output_1, p.output_2) if order == "orig" else (p.output_2, p.output_1)
        record = Perturbation(field=p.field, operation=p.operation)
        calls.append(
            PlannedCall(
                judge,
                item.id,
                item.subset,
                "pair",
                kind,
                order,
                item.label,
                p.instruction,
                a,
                b,
                "English",
                record,
            )
        )
    return calls, unperturbable


def rejudge(
    run: RunDir,
    calls: Sequence[PlannedCall],
    *,
    judge: str,
    template_path: str | None,
    options: CallOptions,
    execution: Execution,
) -> tuple[list[Judgment], int]:
    """Judge what is still pending of `calls`; returns every answer the neighbours file holds for
    them (this invocation's and earlier ones') and how many calls failed."""
    template = load_template(template_path)
    sink = run.neighbours()  # read once; what this call appends joins it
    client = options.client(judge, PriceTable.load())
    client.name = judge
    total = len(pending_calls(calls, sink.latest()))

    async def go() -> None:
        try:
            with ProgressReporter(total, f"bbe neighbours {judge}", enabled=options.progress) as bar:
                await execute_plan(calls, {judge: client}, template, sink, progress=bar, execution=execution)
        finally:
            await client.aclose()

    if calls:
        asyncio.run(go())
    latest = sink.latest()
    answers = [latest[c.key] for c in calls if c.key in latest]
    return answers, sum(1 for j in answers if j.verdict is None)
