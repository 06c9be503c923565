"""The judge stage: every planned (item, condition, order) and tie-probe for each judge; resumable."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgebench import defaults
from judgebench.api.bbe import record_repeats
from judgebench.api.datasets import load_run_dataset, pick_items, run_folder
from judgebench.api.options import CallOptions, require_keys
from judgebench.api.probing import ProbePlan, bases_of, plan_probes, write_probe_variants
from judgebench.api.resume import call_meaning, refuse_changed_meaning
from judgebench.conditions import SOURCE, select_conditions
from judgebench.costing.durations import announce, expected, stage_time
from judgebench.costing.estimate import Estimate, estimate_judging
from judgebench.costing.output_tokens import run_figures
from judgebench.costing.spending import arm_budget, refuse_batch, seed_budget
from judgebench.errors import ConfigError, InputError, RunDirError
from judgebench.execution import Execution, execute_plan, pending_calls
from judgebench.execution.settling import Rounds, judge_until_settled
from judgebench.judge.plan import PlannedCall, plan_calls, stand_in_variants
from judgebench.judge.requests import build_request
from judgebench.judge.templates import JudgeTemplate, load_template
from judgebench.models import JudgeSpec
from judgebench.models.client import ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records import PlannedKey
from judgebench.records.manifest import (
    DatasetEntry,
    JudgeEntry,
    JudgeStage,
    Manifest,
    SequentialStop,
    TemplateEntry,
    TranslateStage,
)
from judgebench.records.numbers import USER_NUMBERS, NonNegative
from judgebench.records.outcomes import JudgeOutcome
from judgebench.store.answers_log import paused_gc
from judgebench.store.run_folder import IndexedAppender, RunDir


class JudgeRequest(BaseModel):
    """What `judgebench judge` asks for (INTERFACE.md); defaults are the CLI's."""

    model_config = USER_NUMBERS

    models: list[str] = Field(default_factory=lambda: [defaults.MODEL])
    # the dataset of a run with no translate stage (en only); else the run's own
    dataset: str | None = None
    data_dir: str | None = None
    template_path: Path | None = None
    # comma-separated or a list; None: en plus every condition the run translated
    conditions: str | list[str] | None = None
    # probes of configs/probes/ (`length,format` or `all`), each applied to every judged condition
    probes: str | list[str] | None = None
    tie_probes: bool = True
    limit: int | None = Field(default=None, ge=1)
    subset: str | None = None
    dry_run: bool = False
    # USD, shared by all judges: stop scheduling paid calls before the budget would be passed
    max_cost: NonNegative | None = None
    # judge whole items in rounds (seeded, subset-stratified order) and stop each judge once every
    # readiness verdict is decided by anytime-valid confidence sequences (execution/settling.py)
    until_settled: bool = False
    # re-ask K times the identical en input of sampled units (each a recorded call the cache does
    # not answer): the repeat jitter bbe reports beside the sensitivity (PROTOCOL §5)
    repeats: int | None = Field(default=None, ge=1)
    round_items: int = Field(default=defaults.ROUND_ITEMS, ge=1)
    settle_seed: int = 0


class JudgeResult(BaseModel):
    outcomes: dict[str, JudgeOutcome] = Field(default_factory=dict)
    planned: int = 0
    notes: list[str] = Field(default_factory=list)
    estimates: list[Estimate] = Field(default_factory=list)
    stops: dict[str, SequentialStop] = Field(default_factory=dict)  # judge --until-settled
    repeats: int = 0  # judge --repeats K: the re-asks planned (in bbe_neighbours.jsonl)


class JudgePlan(BaseModel):
    """The calls of one judge invocation and the dataset entry to record (nothing written yet)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    calls: list[PlannedCall]
    notes: list[str]
    dataset: DatasetEntry
    probes: ProbePlan = Field(default_factory=ProbePlan)


def _wanted_conditions(run: RunDir, manifest: Manifest, conditions: str | list[str] | None) -> list[str]:
    if isinstance(conditions, str):
        wanted = [c.strip() for c in conditions.split(",") if c.strip()]
        if not wanted:
            raise ConfigError(
                f"run {run.path}: --conditions '{conditions}' names no condition; e.g. --conditions en,zh,ls"
            )
        return wanted
    if conditions:
        return list(conditions)
    translated = manifest.stages.translate
    if translated is not None:
        _refuse_unfinished(run, translated)
    return [SOURCE, *(translated.condition_names() if translated else [])]


def _refuse_unfinished(run: RunDir, translated: TranslateStage) -> None:
    """A translate stage that did not finish (failed items, a condition with no variant) is not
    judged as if it had: the user finishes it, or names the conditions to judge (--conditions)."""
    failed = translated.outcome.failed if translated.outcome else []
    absent = [c for c in translated.last_conditions if c not in translated.condition_names()]
    if not failed and not absent:
        return
    short = {c for f in failed for c in f.conditions} | set(absent)
    why = f"{len(failed)} item(s) not translated" if failed else "no variant made"
    if failed:
        why += f" (first: {failed[0].item_id}: {failed[0].reason})"
    held = ",".join([SOURCE, *translated.condition_names()])
    raise RunDirError(
        f"run {run.path}: the translate stage did not finish for {', '.join(sorted(short))}: {why}; "
        "rerun the same `judgebench translate` command to finish it, or pass "
        f"--conditions {held} to judge only what the run holds"
    )


def plan_judging(run: RunDir, request: JudgeRequest, *, stand_in: bool = False) -> JudgePlan:
    """The plan and the dataset's manifest entry; reads only, so bad input leaves the run as it was.
    `stand_in`: a run with no variants yet is planned with the en texts standing in for its targets'
    (`stand_in_variants`: to price judging before translation is paid for)."""
    manifest = run.manifest()
    if request.dataset is None and manifest.dataset is None:
        raise RunDirError(
            f"run {run.path} has no dataset yet (`translate --dry-run` records nothing): run "
            "`judgebench translate` first, or pass --dataset SPEC [--data-dir DIR]; to price judging "
            "before paying for translation, add the conditions too: --dry-run --conditions en,zh,ls"
        )
    ds, entry = load_run_dataset(run, request.dataset, request.data_dir, conditions=request.conditions)
    items = pick_items(ds.items, request.subset, request.limit, ds.spec)
    wanted = _wanted_conditions(run, manifest, request.conditions)
    others = [w for w in wanted if w != SOURCE]
    targets = select_conditions(others) if others else []
    variants = run.variants().latest()
    if targets and not variants and stand_in:
        variants = stand_in_variants(items, targets)
    if targets and not variants:
        raise RunDirError(
            f"run {run.path} has no variants for {', '.join(c.name for c in targets)}: "
            "run `judgebench translate` first"
        )
    probes = plan_probes(request.probes, items, variants, bases_of(SOURCE in wanted, targets))
    if probes.variants:
        variants = {**variants, **{(v.item_id, v.condition): v for v in probes.variants}}
    with paused_gc():  # a call per judge, item, condition and order: a million at M-RewardBench size
        calls, notes = plan_calls(
            items,
            variants,
            [*targets, *probes.conditions],
            request.models,
            include_source=SOURCE in wanted,
            tie_probes=request.tie_probes,
            templates=probes.templates,
        )
    notes += probes.notes
    if not calls:
        more = f" and {len(notes) - 1} more like it" if len(notes) > 1 else ""
        why = f": {notes[0]}{more}" if notes else ""
        raise ConfigError(f"run {run.path}: nothing to judge for conditions {', '.join(wanted)}{why}")
    return JudgePlan(calls=calls, notes=notes, dataset=entry, probes=probes)


def record_plan(run: RunDir, calls: Sequence[PlannedCall]) -> None:
    """Append the planned calls `plan.jsonl` does not list yet, before any is made: a run killed
    mid-way is then known to be incomplete (the plan grows when a later command adds conditions)."""
    index = run.plan()
    known = index.latest()
    # a plan that names a call twice records it once
    new = list(dict.fromkeys(call.key for call in calls if call.key not in known))
    if not new:
        return
    with IndexedAppender(index) as out:
        for key in new:
            out.append(PlannedKey(**key._asdict()))


def _resolve_models(models: Sequence[str], options: CallOptions) -> dict[str, JudgeSpec]:
    """Each `--model` resolved, once for the command: a bad spec is the error, not a dataset that
    fails to load after it."""
    if not models:
        raise ConfigError("no judge given: pass --model PROVIDER:MODEL (e.g. local or openai:gpt-4.1-mini)")
    if len(set(models)) != len(models):
        raise ConfigError("the same --model is given twice")
    return options.judges().resolve_all(models)


def _clients(
    judges: Mapping[str, JudgeSpec], request: JudgeRequest, options: CallOptions, execution: Execution
) -> dict[str, ModelClient]:
    """One client per judge, checked for batch support and armed with the shared budget. Records
    name the judge by what the user typed (a configured name resolves to its spec)."""
    clients = {name: options.client(judge) for name, judge in judges.items()}
    if execution.batch:
        refuse_batch(list(clients.values()))
    arm_budget(list(clients.values()), request.max_cost)
    return clients


def _run_plan(
    run: RunDir,
    plan: Sequence[PlannedCall],
    clients: Mapping[str, ModelClient],
    template: JudgeTemplate,
    *,
    execution: Execution,
    progress: bool | None,
) -> dict[str, JudgeOutcome]:
    # per-judge request defaults from configs/judges.toml (temperature, max_tokens)
    defaults = {name: client.request_defaults for name, client in clients.items()}
    pending = pending_calls(plan, run.judgments().latest())
    to_pay = {name: _to_pay(pending, name, c, template, defaults[name]) for name, c in clients.items()}
    took = [expected(name, c.spec, c.settings, to_pay[name][0], "judge") for name, c in clients.items()]
    line = announce(took, f"judge {', '.join(clients)}")
    cached = [f"{name} {share:.0%}" for name, (_, share) in to_pay.items() if share > 0]
    if cached:
        line += f"; already in the response cache (a sample of the calls): {', '.join(cached)}"
    ahead = (stage_time(took), line)

    async def go() -> dict[str, JudgeOutcome]:
        try:
            what = f"judge {', '.join(clients)}"
            with ProgressReporter(len(pending), what, enabled=progress, expected=ahead) as bar:
                return await execute_plan(
                    plan,
                    clients,
                    template,
                    run.judgments(),
                    progress=bar,
                    request_defaults=defaults,
                    execution=execution,
                )
        finally:
            for client in clients.values():
                await client.aclose()

    return asyncio.run(go())


CACHE_SAMPLE = 100  # pending calls per judge looked up in the response store before announcing


def _to_pay(
    pending: Sequence[PlannedCall],
    name: str,
    client: ModelClient,
    template: JudgeTemplate,
    defaults: Mapping[str, Any],
) -> tuple[int, float]:
    """How many of a judge's pending calls will be paid for (and take time), and the share the
    response store holds, from an evenly spaced sample: a fully cached rerun announced 6m17s and took
    6 s."""
    mine = [c for c in pending if c.judge == name]
    if not mine or not client.use_cache:
        return len(mine), 0.0
    picked = mine[:: max(1, len(mine) // CACHE_SAMPLE)][:CACHE_SAMPLE]
    share = sum(client.holds(build_request(c, template, client, defaults)) for c in picked) / len(picked)
    return round(len(mine) * (1.0 - share)), share


def _record(
    run: RunDir,
    request: JudgeRequest,
    plan: JudgePlan,
    template: JudgeTemplate,
    clients: Mapping[str, ModelClient],
    *,
    outcomes: Mapping[str, JudgeOutcome],
    execution: Execution,
    settled: tuple[Mapping[str, SequentialStop], int] | None = None,
) -> None:
    """The judge stage's manifest entry; `settled` = (the stops, the full design's call count) of a
    judge --until-settled run."""
    stops, full_planned = settled if settled is not None else ({}, None)
    previous = run.manifest().stages.judge
    judges = dict(previous.judges) if previous else {}
    for name, client in clients.items():
        judges[name] = JudgeEntry(
            spec=client.spec.text,
            settings=client.settings.for_record(),
            outcome=outcomes.get(name) or _no_outcome(),
            stats=client.stats.model_dump(),
            meaning=call_meaning(
                client.spec.text, client.request_defaults, client.traits.completion_only, template
            ),
        )
    kept = {k: v for k, v in previous.stops.items() if k not in clients} if previous else {}
    entry = JudgeStage(
        judges=judges,
        template=TemplateEntry(
            name=template.name,
            hash=template.digest(),
            path=str(request.template_path or "default"),
            tell_condition=template.tell_condition,
        ),
        conditions=sorted({c.condition for c in plan.calls if c.kind == "pair"}),
        tie_probes=request.tie_probes,
        planned=len(plan.calls),
        notes=plan.notes,
        mode=execution.mode,
        max_cost_usd=request.max_cost,
        stops={**kept, **stops},
        full_planned=full_planned,
        probes={**(previous.probes if previous else {}), **plan.probes.entries},
    )
    run.record_stage("judge", entry)


def _no_outcome() -> JudgeOutcome:
    return JudgeOutcome(
        planned=0, already_done=0, requested=0, verdicts=0, invalid=0, missing=0, cache_hits=0,
        provider_calls=0, input_tokens=0, output_tokens=0, cost_usd=0.0, failures=[],
    )  # fmt: skip


def _until_settled(
    run: RunDir,
    req: JudgeRequest,
    plan: JudgePlan,
    template: JudgeTemplate,
    clients: Mapping[str, ModelClient],
    *,
    execution: Execution,
    progress: bool | None,
) -> JudgeResult:
    def on_round(planned: Sequence[PlannedCall], stops: Mapping[str, SequentialStop]) -> None:
        record_plan(run, planned)
        judged = plan.model_copy(update={"calls": list(planned)})
        _record(
            run, req, judged, template, clients, outcomes={}, execution=execution,
            settled=(stops, len(plan.calls)),
        )  # fmt: skip

    outcomes, stops, planned = judge_until_settled(
        run, plan.calls, clients, template, execution=execution, progress=progress,
        rounds=Rounds(seed=req.settle_seed, items=req.round_items), on_round=on_round,
    )  # fmt: skip
    judged = plan.model_copy(update={"calls": planned})
    _record(
        run, req, judged, template, clients, outcomes=outcomes, execution=execution,
        settled=(stops, len(plan.calls)),
    )  # fmt: skip
    return JudgeResult(
        outcomes={n: outcomes.get(n) or _no_outcome() for n in clients},
        planned=len(planned),
        notes=plan.notes,
        stops=stops,
    )


def _dry_run(
    run: RunDir,
    req: JudgeRequest,
    template: JudgeTemplate,
    options: CallOptions,
    judges: Mapping[str, JudgeSpec],
) -> JudgeResult:
    """The calls, tokens and cost of the judging asked for; conditions the run has no variants for
    yet (before `translate`, whose dry run writes nothing) are priced from the en plan, as
    `run --dry-run` prices them, so that judging can be priced before translation is paid for."""
    wanted = _wanted_conditions(run, run.manifest(), req.conditions)
    others = [c for c in wanted if c != SOURCE]
    ahead = bool(others) and not run.variants().latest()
    plan = plan_judging(run, req, stand_in=ahead)
    todo = pending_calls(plan.calls, run.judgments().latest())
    # a resumed run's replies so far are the best guess at the rest of its replies
    observed = run_figures(run) if run.judgments().path.exists() else None
    estimates = estimate_judging(
        plan.calls, todo, template, judges.values(), catalog=options.judges(), observed=observed
    )
    notes = list(plan.notes)
    if ahead:
        notes.append(
            f"{', '.join(others)}: not translated yet, priced from the en texts (a translation is about "
            "as long as its source), as `plan` prices them; `judgebench translate` first makes them exact"
        )
    elif not others and run.manifest().stages.translate is None:
        notes.append(
            "priced en only, as this run holds no translation yet: to price judging the targets "
            "before translating them, add --conditions en,zh,ls (or the targets you will translate)"
        )
    return JudgeResult(planned=len(plan.calls), notes=notes, estimates=estimates)


def judge(
    run_dir: str | Path | RunDir,
    request: JudgeRequest | None = None,
    *,
    options: CallOptions | None = None,
    execution: Execution | None = None,
) -> JudgeResult:
    """Judge every planned (item, condition, order) and tie-probe for each model; resumable.

    `execution` chooses live calls, the provider Batch API, a vLLM batch file to write, or a batch
    output to import; `max_cost` (USD, shared by all judges) stops scheduling paid calls before the
    budget would be exceeded, leaving a resumable run."""
    req = request or JudgeRequest()
    options = options or CallOptions()
    judges = _resolve_models(req.models, options)
    execution = execution or Execution()
    run = run_folder(run_dir)
    template = load_template(req.template_path)
    refuse_changed_meaning(run, judges, template)  # never one judge made of two settings
    if req.dry_run:
        return _dry_run(run, req, template, options, judges)
    plan = plan_judging(run, req)
    if req.until_settled and (execution.write_requests is not None or execution.import_file is not None):
        raise ConfigError("--until-settled runs rounds of calls: it cannot write or import a batch file")
    if execution.import_file is not None and not Path(execution.import_file).is_file():
        raise InputError("--import-batch: not a file", path=str(execution.import_file))
    calls_made = execution.import_file is None and execution.write_requests is None
    if calls_made and pending_calls(plan.calls, run.judgments().latest()):
        require_keys(judges.values())  # before the run folder is touched
    clients = _clients(judges, req, options, execution)
    # one writer per run and stage: a second judge would pay for every call again
    with run.lock("judge", wait=options.wait_lock):
        run.init(dataset=plan.dataset)
        seed_budget(list(clients.values()), run)  # --max-cost is the run's: what it paid counts
        write_probe_variants(run, plan.probes.variants)
        if req.until_settled:
            progress = options.progress
            result = _until_settled(run, req, plan, template, clients, execution=execution, progress=progress)
        else:
            record_plan(run, plan.calls)
            outcomes = _run_plan(
                run, plan.calls, clients, template, execution=execution, progress=options.progress
            )
            _record(run, req, plan, template, clients, outcomes=outcomes, execution=execution)
            result = JudgeResult(outcomes=outcomes, planned=len(plan.calls), notes=plan.notes)
        if req.repeats:
            result.repeats = record_repeats(
                run, list(clients), req.repeats, options=options, execution=execution
            )
    return result
