"""The judge stage: every planned (item, condition, order) and tie-probe for each judge; resumable."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgebench.api.datasets import load_run_dataset, open_dataset, pick_items, run_folder
from judgebench.api.options import CallOptions
from judgebench.api.probing import ProbePlan, bases_of, plan_probes, write_probe_variants
from judgebench.api.resume import call_meaning, refuse_changed_meaning
from judgebench.api.stages import Counted, Stage, run_stage
from judgebench.api.study import Study
from judgebench.bbe.scores import load_run
from judgebench.bbe.sources import sample_units
from judgebench.conditions import SOURCE, select_conditions
from judgebench.config import defaults
from judgebench.costing.durations import announce, expected, stage_time
from judgebench.costing.estimate import Estimate, estimate_judging, prompt_text
from judgebench.costing.output_tokens import run_figures
from judgebench.errors import ConfigError, InputError, RunDirError
from judgebench.execution import Execution, execute_plan, pending_calls, rejudge
from judgebench.execution.settling import Rounds, judge_until_settled
from judgebench.judge.call_plan import PlannedCall, ahead_variants, plan_calls
from judgebench.judge.provider_requests import build_request
from judgebench.judge.templates import JudgeTemplate, load_template
from judgebench.judge.units import REPEAT_SEED, repeat_calls
from judgebench.models import JudgeSpec
from judgebench.models.client import ModelClient
from judgebench.models.pricing import estimate_tokens
from judgebench.progress import ProgressReporter
from judgebench.records import Item, PlannedKey, Variant
from judgebench.records.manifest import (
    DatasetEntry,
    JudgeEntry,
    JudgeStage,
    Manifest,
    SequentialStop,
    TemplateEntry,
    TranslateStage,
)
from judgebench.records.numbers import NonNegative
from judgebench.records.outcomes import JudgeOutcome
from judgebench.store.answers_log import paused_gc
from judgebench.store.run_folder import IndexedAppender, RunDir


class JudgeRequest(Study):
    """What `judgebench judge` asks for (INTERFACE.md): the Study (dataset: only for a run with no
    translate stage, else the run's; conditions None: en plus every condition the run translated;
    probes: each applied to every judged condition) and how to judge it; defaults are the CLI's."""

    tie_probes: bool = True
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
    # the targets planned with the en texts standing in for theirs (not translated yet: `ahead`)
    stood_in: list[str] = Field(default_factory=list)


def _wanted_conditions(run: RunDir, manifest: Manifest, conditions: Sequence[str] | None) -> list[str]:
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


class Design(BaseModel):
    """The calls of a study's judging, planned in memory from its items and variants (no run folder):
    what `judge`, `judge --dry-run`, `run --dry-run` and `plan` all price and make."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    calls: list[PlannedCall]
    notes: list[str]
    probes: ProbePlan = Field(default_factory=ProbePlan)


def plan_design(
    items: Sequence[Item],
    variants: Mapping[tuple[str, str], Variant],
    wanted: Sequence[str],
    request: Study,
    *,
    tie_probes: bool = True,
) -> Design:
    """Every judge's calls on `items` in the `wanted` conditions (en and targets, by name) and the
    probes the study asks for on them: the one planning code of every command."""
    others = [w for w in wanted if w != SOURCE]
    targets = select_conditions(others) if others else []
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
            tie_probes=tie_probes,
            templates=probes.templates,
        )
    return Design(calls=calls, notes=[*notes, *probes.notes], probes=probes)


def plan_judging(
    run: RunDir, request: JudgeRequest, *, ahead: bool = False, skip_bad_rows: bool = False
) -> JudgePlan:
    """The plan and the dataset's manifest entry; reads only, so bad input leaves the run as it was.
    `ahead`: a run with no variants yet is planned from the dataset's own variants where it carries
    them, the en texts standing in for the other targets' (`ahead_variants`: to price judging before
    translate imports or pays for them). `skip_bad_rows`: as the translate stage to come will."""
    manifest = run.manifest()
    if request.dataset is None and manifest.dataset is None:
        raise RunDirError(
            f"run {run.path} has no dataset yet (`translate --dry-run` records nothing): run "
            "`judgebench translate` first, or pass --dataset SPEC [--data-dir DIR]; to price judging "
            "before paying for translation, add the conditions too: --dry-run --conditions en,zh,ls"
        )
    ds, entry = load_run_dataset(
        run, request.dataset, request.data_dir, skip_bad_rows=skip_bad_rows, conditions=request.conditions
    )
    items = pick_items(ds.items, request.subset, request.limit, ds.spec)
    wanted = _wanted_conditions(run, manifest, request.conditions)
    others = [w for w in wanted if w != SOURCE]
    targets = select_conditions(others) if others else []
    variants = run.variants().latest()
    stood_in: list[str] = []
    if targets and not variants and ahead:
        variants = ahead_variants(items, targets, ds.variants)
        stood_in = [c.name for c in targets if not ds.provides(c.name)]
    if targets and not variants:
        raise RunDirError(
            f"run {run.path} has no variants for {', '.join(c.name for c in targets)}: "
            "run `judgebench translate` first"
        )
    design = plan_design(items, variants, wanted, request, tie_probes=request.tie_probes)
    if not design.calls:
        notes = design.notes
        more = f" and {len(notes) - 1} more like it" if len(notes) > 1 else ""
        why = f": {notes[0]}{more}" if notes else ""
        raise ConfigError(f"run {run.path}: nothing to judge for conditions {', '.join(wanted)}{why}")
    return JudgePlan(
        calls=design.calls, notes=design.notes, dataset=entry, probes=design.probes, stood_in=stood_in
    )


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


def _run_plan(
    run: RunDir,
    plan: Sequence[PlannedCall],
    clients: Mapping[str, ModelClient],
    template: JudgeTemplate,
    *,
    execution: Execution,
    progress: ProgressReporter,
) -> dict[str, JudgeOutcome]:
    # per-judge request defaults from configs/judges.toml (temperature, max_tokens)
    defaults = {name: client.request_defaults for name, client in clients.items()}

    async def go() -> dict[str, JudgeOutcome]:
        try:
            return await execute_plan(
                plan,
                clients,
                template,
                run.judgments(),
                progress=progress,
                request_defaults=defaults,
                execution=execution,
            )
        finally:
            for client in clients.values():
                await client.aclose()

    return asyncio.run(go())


def _counted(
    run: RunDir, plan: Sequence[PlannedCall], clients: Mapping[str, ModelClient], template: JudgeTemplate
) -> Counted:
    """The judge stage's pending calls and the time they are expected to take (the share the
    response cache answers left out)."""
    defaults = {name: client.request_defaults for name, client in clients.items()}
    pending = pending_calls(plan, run.judgments().latest())
    to_pay = {name: _to_pay(pending, name, c, template, defaults[name]) for name, c in clients.items()}
    took = [
        expected(name, c.spec, c.settings, to_pay[name].calls, "judge",
                 input_tokens=to_pay[name].input_tokens, output_tokens=to_pay[name].output_tokens)
        for name, c in clients.items()
    ]  # fmt: skip
    what = f"judge {', '.join(clients)}"
    line = announce(took, what)
    cached = [f"{name} {paid.cached:.0%}" for name, paid in to_pay.items() if paid.cached > 0]
    if cached:
        line += f"; already in the response cache (a sample of the calls): {', '.join(cached)}"
    return Counted(len(pending), what, (stage_time(took), line))


CACHE_SAMPLE = 100  # pending calls per judge looked up in the response store before announcing


class ToPay(BaseModel):
    """A judge's pending calls that will be paid for (and take time), their prompt and reply tokens
    (the sample's mean per call, times the calls), and the share the response store holds."""

    calls: int
    input_tokens: int
    output_tokens: int
    cached: float


def _to_pay(
    pending: Sequence[PlannedCall],
    name: str,
    client: ModelClient,
    template: JudgeTemplate,
    defaults: Mapping[str, Any],
) -> ToPay:
    """From an evenly spaced sample of a judge's pending calls: a fully cached rerun announced 6m17s
    and took 6 s; the embedded judge's time is in its prompt tokens."""
    mine = [c for c in pending if c.judge == name]
    if not mine:
        return ToPay(calls=0, input_tokens=0, output_tokens=0, cached=0.0)
    picked = mine[:: max(1, len(mine) // CACHE_SAMPLE)][:CACHE_SAMPLE]
    requests = [build_request(c, template, client, defaults) for c in picked]
    share = sum(client.holds(r) for r in requests) / len(picked) if client.use_cache else 0.0
    calls = round(len(mine) * (1.0 - share))
    prompt = sum(estimate_tokens(prompt_text(r), client.spec) for r in requests) / len(requests)
    reply = sum(r.max_tokens or 0 for r in requests) / len(requests)
    return ToPay(
        calls=calls, input_tokens=round(prompt * calls), output_tokens=round(reply * calls), cached=share
    )


def _entry(
    run: RunDir,
    request: JudgeRequest,
    plan: JudgePlan,
    template: JudgeTemplate,
    clients: Mapping[str, ModelClient],
    *,
    outcomes: Mapping[str, JudgeOutcome],
    execution: Execution,
    settled: tuple[Mapping[str, SequentialStop], int] | None = None,
) -> JudgeStage:
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
    return entry


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
    progress: ProgressReporter,
) -> tuple[JudgeResult, JudgeStage]:
    def on_round(planned: Sequence[PlannedCall], stops: Mapping[str, SequentialStop]) -> None:
        record_plan(run, planned)
        judged = plan.model_copy(update={"calls": list(planned)})
        entry = _entry(
            run, req, judged, template, clients, outcomes={}, execution=execution,
            settled=(stops, len(plan.calls)),
        )  # fmt: skip
        run.record_stage("judge", entry)

    outcomes, stops, planned = judge_until_settled(
        run, plan.calls, clients, template, execution=execution, progress=progress,
        rounds=Rounds(seed=req.settle_seed, items=req.round_items), on_round=on_round,
    )  # fmt: skip
    judged = plan.model_copy(update={"calls": planned})
    entry = _entry(
        run, req, judged, template, clients, outcomes=outcomes, execution=execution,
        settled=(stops, len(plan.calls)),
    )  # fmt: skip
    return JudgeResult(
        outcomes={n: outcomes.get(n) or _no_outcome() for n in clients},
        planned=len(planned),
        notes=plan.notes,
        stops=stops,
    ), entry


def price_judging(
    run_dir: str | Path | RunDir,
    request: JudgeRequest,
    *,
    options: CallOptions | None = None,
    skip_bad_rows: bool = False,
) -> JudgeResult:
    """`judge --dry-run` (and `run --dry-run`'s judge part): the calls, tokens and cost of the judging
    asked for, pending calls only; writes nothing. Conditions the run has no variants for yet (before
    `translate`, whose dry run writes nothing) are planned in memory from the dataset's own variants
    (M-RewardBench) or the en texts (`ahead_variants`), as `plan` plans them, so that judging can be
    priced before translation is paid for. `skip_bad_rows`: as the translate stage to come will."""
    options = options or CallOptions()
    judges = _resolve_models(request.models, options)
    run = run_folder(run_dir)
    template = load_template(request.template_path)
    refuse_changed_meaning(run, judges, template)  # never one judge made of two settings
    wanted = _wanted_conditions(run, run.manifest(), request.conditions)
    others = [c for c in wanted if c != SOURCE]
    ahead = bool(others) and not run.variants().latest()
    plan = plan_judging(run, request, ahead=ahead, skip_bad_rows=skip_bad_rows)
    todo = pending_calls(plan.calls, run.judgments().latest())
    # a resumed run's replies so far are the best guess at the rest of its replies
    observed = run_figures(run) if run.judgments().path.exists() else None
    estimates = estimate_judging(
        plan.calls, todo, template, judges.values(), catalog=options.judges(), observed=observed
    )
    notes = [*plan.notes, *_pricing_notes(run, others, plan, ahead=ahead)]
    return JudgeResult(planned=len(plan.calls), notes=notes, estimates=estimates)


def _pricing_notes(run: RunDir, others: Sequence[str], plan: JudgePlan, *, ahead: bool) -> list[str]:
    """What a dry run's figures rest on: the dataset's own variants, the en texts, or en only."""
    notes: list[str] = []
    carried = [c for c in others if c not in plan.stood_in]
    if ahead and carried:
        notes.append(
            f"{', '.join(carried)}: planned from the dataset's own variants (`judgebench translate` "
            "imports them, with no call)"
        )
    if plan.stood_in:
        notes.append(
            f"{', '.join(plan.stood_in)}: not translated yet, priced from the en texts (a translation is "
            "about as long as its source), as `plan` prices them; `judgebench translate` first makes "
            "them exact"
        )
    elif not others and run.manifest().stages.translate is None:
        notes.append(
            "priced en only, as this run holds no translation yet: to price judging the targets "
            "before translating them, add --conditions en,zh,ls (or the targets you will translate)"
        )
    return notes


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
    if req.dry_run:
        return price_judging(run_dir, req, options=options)
    options = options or CallOptions()
    judges = _resolve_models(req.models, options)
    execution = execution or Execution()
    run = run_folder(run_dir)
    template = load_template(req.template_path)
    refuse_changed_meaning(run, judges, template)  # never one judge made of two settings
    plan = plan_judging(run, req)
    if req.until_settled and (execution.write_requests is not None or execution.import_file is not None):
        raise ConfigError("--until-settled runs rounds of calls: it cannot write or import a batch file")
    if execution.import_file is not None and not Path(execution.import_file).is_file():
        raise InputError("--import-batch: not a file", path=str(execution.import_file))
    calls_made = execution.import_file is None and execution.write_requests is None
    paying = calls_made and bool(pending_calls(plan.calls, run.judgments().latest()))
    stage = _Judging(req, plan, template, judges, options=options, execution=execution, paying=paying)
    result = run_stage(run, stage, options=options, execution=execution)
    if req.repeats:
        result.repeats = record_repeats(
            run, list(stage.clients), req.repeats, options=options, execution=execution
        )
    return result


class _Judging(Stage[JudgeResult]):
    """The judge stage's parts for the runner (api/stages.py): its plan made, its judges resolved."""

    name = "judge"

    def __init__(
        self,
        req: JudgeRequest,
        plan: JudgePlan,
        template: JudgeTemplate,
        judges: Mapping[str, JudgeSpec],
        *,
        options: CallOptions,
        execution: Execution,
        paying: bool,
    ) -> None:
        self.req, self.plan, self.template, self.judges = req, plan, template, judges
        self.options, self.execution, self.paying = options, execution, paying
        self.max_cost = req.max_cost
        self.clients: dict[str, ModelClient] = {}
        self.entry: JudgeStage | None = None

    def keys(self) -> list[JudgeSpec]:
        return list(self.judges.values()) if self.paying else []

    def connect(self) -> list[ModelClient]:
        # records name the judge by what the user typed (a configured name resolves to its spec)
        self.clients = {name: self.options.client(judge) for name, judge in self.judges.items()}
        return list(self.clients.values())

    def dataset(self) -> DatasetEntry:
        return self.plan.dataset

    def progress(self, run: RunDir) -> Counted:
        if self.req.until_settled:  # rounds until settled: no time said for the full design
            pending = pending_calls(self.plan.calls, run.judgments().latest())
            return Counted(len(pending), f"judge {', '.join(self.clients)} (until settled)")
        return _counted(run, self.plan.calls, self.clients, self.template)

    def execute(self, run: RunDir, progress: ProgressReporter) -> JudgeResult:
        write_probe_variants(run, self.plan.probes.variants)
        req, plan, template, clients = self.req, self.plan, self.template, self.clients
        if req.until_settled:
            result, self.entry = _until_settled(
                run, req, plan, template, clients, execution=self.execution, progress=progress
            )
            return result
        record_plan(run, plan.calls)
        outcomes = _run_plan(run, plan.calls, clients, template, execution=self.execution, progress=progress)
        self.entry = _entry(run, req, plan, template, clients, outcomes=outcomes, execution=self.execution)
        return JudgeResult(outcomes=outcomes, planned=len(plan.calls), notes=plan.notes)

    def record(self, run: RunDir, result: JudgeResult) -> JudgeStage | None:
        return self.entry


def record_repeats(
    run: RunDir, judges: Sequence[str], repeats: int, *, options: CallOptions, execution: Execution
) -> int:
    """`judge --repeats K`: re-ask the identical en input of sampled units K times for each judge
    (planned calls of the repeat kind, judge/units.py, recorded as `repeat-i`), each a recorded call
    the cache does not answer, into the neighbours file, where `bbe` reads them as the repeat jitter
    it reports beside the sensitivity (PROTOCOL §5). Returns the calls planned."""
    # the units bbe draws with its default seed, so that it finds these re-asks
    sets = [ss for ss in load_run(run).sets if ss.name in judges]
    items = open_dataset(run, None, None).by_id()
    units = {ss.name: sample_units(ss, defaults.PERTURB_UNITS, REPEAT_SEED) for ss in sets}
    plan = {name: repeat_calls(name, items, drawn, repeats) for name, drawn in units.items()}
    recorded = run.manifest().stages.judge
    template = load_template(recorded.template.user_path() if recorded else None)
    # a cached answer would hide the jitter
    held = run.neighbours().latest()
    paying = [name for name, calls in plan.items() if pending_calls(calls, held)]
    stage = _Repeating(plan, template, options=options.without_cache(), execution=execution, paying=paying)
    return run_stage(run, stage, options=options, execution=execution)


class _Repeating(Stage[int]):
    """`judge --repeats`' re-asks for the runner: written to the neighbours file, bbe's (its lock)."""

    name = "bbe"

    def __init__(
        self,
        plan: Mapping[str, list[PlannedCall]],
        template: JudgeTemplate,
        *,
        options: CallOptions,
        execution: Execution,
        paying: Sequence[str],
    ) -> None:
        self.plan, self.template, self.options, self.execution = plan, template, options, execution
        self.paying = paying  # the judges with re-asks still to make (their keys are needed)

    def keys(self) -> list[JudgeSpec]:
        return [self.options.resolve(name) for name in self.paying]

    def connect(self) -> list[ModelClient]:
        self.clients = {name: self.options.client(name) for name in self.plan}
        return list(self.clients.values())

    def progress(self, run: RunDir) -> Counted:
        held = run.neighbours().latest()
        pending = sum(len(pending_calls(calls, held)) for calls in self.plan.values())
        return Counted(pending, f"bbe neighbours {', '.join(c.name for c in self.clients.values())}")

    def execute(self, run: RunDir, progress: ProgressReporter) -> int:
        for name, calls in self.plan.items():
            rejudge(
                calls, self.clients[name], self.template, run.neighbours(), execution=self.execution,
                progress=progress,
            )  # fmt: skip
        return sum(len(calls) for calls in self.plan.values())

    def record(self, run: RunDir, result: int) -> None:
        return None  # bbe records its stage when it reads them
