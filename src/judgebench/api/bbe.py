"""The bbe stage: calibrate A-BB releases of a Judge-LS run, a scores table or an arena-hard-auto
folder, write bbe.json with its scores and plot, and (with --perturb) judge new neighbours first."""

from __future__ import annotations

import dataclasses
import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from judgebench.api.datasets import open_dataset, run_folder
from judgebench.api.options import CallOptions
from judgebench.api.probing import probe_neighbours
from judgebench.api.stages import Counted, Stage, run_stage
from judgebench.bbe import certificate_registry as registry
from judgebench.bbe.bbe_files import default_out, write_outputs
from judgebench.bbe.engine import BBEParams, BBERun, CalibrationOutput
from judgebench.bbe.neighbours import PerturbKind, perturb_unit
from judgebench.bbe.scores import ScoreSet, UnitScoreMode, load_run
from judgebench.bbe.sources import (
    bbe_from_arena_hard,
    bbe_from_bridge,
    bbe_from_table,
    calibrate_sets,
    fresh_changes,
    sample_units,
    with_perturbation_pairs,
    with_repeats,
)
from judgebench.bbe.verify import VerifySpec, fresh_block
from judgebench.config import defaults
from judgebench.costing.estimate import Estimate, estimate_judging
from judgebench.costing.output_tokens import run_figures
from judgebench.errors import ConfigError
from judgebench.execution import Execution, pending_calls, rejudge
from judgebench.judge.call_plan import PlannedCall
from judgebench.judge.templates import load_template
from judgebench.judge.units import REPEAT_SEED, is_repeat, repeat_calls, repeats_held, unit_call, unit_item
from judgebench.models import JudgeSpec
from judgebench.models.client import ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records import Item, Judgment, Perturbation, UnitKey
from judgebench.records.bbe_document import BBEResult
from judgebench.records.manifest import BBEStage, ProbeEntry
from judgebench.records.numbers import USER_NUMBERS
from judgebench.store.run_folder import RunDir


class PerturbRequest(BaseModel):
    """`--perturb KIND --model M`: re-judge a sample of M's en units with one perturbation each."""

    model_config = USER_NUMBERS

    kind: PerturbKind
    model: str
    units: int | None = Field(default=defaults.PERTURB_UNITS, ge=1)  # None: every en unit
    dataset: str | None = None  # default: the run's
    data_dir: str | None = None
    template_path: str | None = None  # default: the template the run's judge stage used


class BBERequest(BaseModel):
    """What `judgebench bbe` asks for (INTERFACE.md): parameters, one source, and what to write."""

    model_config = USER_NUMBERS

    params: BBEParams
    run: Path | None = None
    scores: Path | None = None
    scale: tuple[float, float] | None = None
    factor_scale: tuple[float, float] | None = None
    arena_hard: Path | None = None
    baseline: str | None = None
    judge: str | None = None  # the judge of a --scores table (default: the file's stem)
    calibrate_from: Path | None = None  # the bridge: a Judge-LS run whose `judge` neighbours calibrate
    neighbours: list[str] | None = None
    # probes whose conditions are neighbours too (`all`: every probe the run was judged with); a run
    # judged with probes calibrates on its languages and the swap only unless they are named here
    probes: list[str] | None = None
    unit_score: UnitScoreMode = "auto"
    perturb: PerturbRequest | None = None
    fresh_units: int | None = Field(
        default=defaults.PERTURB_UNITS, ge=1
    )  # --verify-kind fresh: units to re-judge (None: all)
    repeats: int | None = Field(default=None, ge=1)  # re-ask sampled en units K times: the jitter
    out: Path | None = None
    plot: bool = True

    @model_validator(mode="after")
    def _one_source(self) -> BBERequest:
        if sum(x is not None for x in (self.run, self.scores, self.arena_hard)) != 1:
            raise ValueError("give exactly one of --run DIR, --scores FILE --scale MIN MAX, --arena-hard DIR")
        if self.scores is not None and self.scale is None:
            raise ValueError("--scores needs --scale MIN MAX (the declared range, never the observed one)")
        if self.calibrate_from is not None and (self.scores is None or self.judge is None):
            raise ValueError("--calibrate-from RUN needs --judge NAME and --scores FILE --scale MIN MAX")
        if self.params.verify_kind == "fresh" and self.params.verify and self.run is None:
            raise ValueError("--verify-kind fresh judges new neighbours of a Judge-LS run: give --run DIR")
        cert = self.params.certificate
        fresh = self.params.verify and self.params.verify_kind == "fresh"
        if fresh and cert != registry.AUTO and registry.kind_of(cert).verification == "in_sample_monte_carlo":
            raise ValueError(
                f"--verify-kind fresh tests carrying over to new neighbours, and the {cert} certificate "
                "certifies only the listed ones: verify it with --verify-kind holdout (a Monte Carlo of "
                "its own probability) or name a certificate that carries over"
            )
        if self.perturb is not None and self.run is None:
            raise ValueError("--perturb re-judges units of a Judge-LS run: give --run DIR")
        return self


class RejudgeOutcome(BaseModel):
    """What re-judging asked for: in bbe.json's `source.perturbation`."""

    kind: str
    model: str
    units_sampled: int
    requested: int
    failed_calls: int
    unperturbable: int
    file: str


class BBEOutcome(BaseModel):
    """bbe.json as written, where everything went, and which calibrations are infeasible (and why)."""

    result: BBEResult
    outputs: dict[str, str]
    out: Path
    infeasible: list[str] = Field(default_factory=list)
    perturbation: RejudgeOutcome | None = None
    kept: Path | None = None  # the feasible release left in place (this infeasible one went beside it)


def _template_path(run: RunDir, given: str | None) -> str | None:
    if given is not None:
        return given
    recorded = run.manifest().stages.judge
    return recorded.template.user_path() if recorded else None


_ITEMS: weakref.WeakKeyDictionary[RunDir, dict[tuple[str | None, str | None], dict[str, Item]]]
_ITEMS = weakref.WeakKeyDictionary()


def _items(run: RunDir, req: BBERequest) -> dict[str, Item]:
    """The run's items by id (the dataset --perturb names, else the run's), recorded in the manifest;
    loaded once per run folder object, however many judges and kinds of calls need them."""
    spec = req.perturb
    which = (spec.dataset, spec.data_dir) if spec else (None, None)
    held = _ITEMS.setdefault(run, {})
    if which not in held:
        held[which] = open_dataset(run, *which).by_id()
    return held[which]


def _perturbed_calls(
    items: dict[str, Item], units: Sequence[UnitKey], *, kind: str, judge: str, seed: int
) -> tuple[list[PlannedCall], int]:
    """One call per perturbable unit (bbe perturbs, the judge room makes the call), and how many
    units nothing could change."""
    calls: list[PlannedCall] = []
    unperturbable = 0
    for unit in units:
        item = unit_item(items, unit)
        p = perturb_unit(item, unit.order, kind, seed)
        if p is None:
            unperturbable += 1
            continue
        texts = (p.instruction, p.output_1, p.output_2)
        record = Perturbation(field=p.field, operation=p.operation)
        calls.append(unit_call(judge, item, unit.order, kind, texts=texts, perturbation=record))
    return calls, unperturbable


def _recorded_probes(run: RunDir) -> dict[str, ProbeEntry]:
    stage = run.manifest().stages.judge
    return dict(stage.probes) if stage else {}


def _kinds(sets: Sequence[ScoreSet]) -> set[str]:
    return {str(k) for s in sets for k in (*s.pair_kind, *s.invalid_kind)}


def _feasible_release(path: Path) -> bool:
    """Whether `path` holds a bbe.json whose every calibration is feasible (a release to keep)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    blocks = data.get("calibrations") if isinstance(data, dict) else None
    if not isinstance(blocks, list) or not blocks:
        return False
    return all(isinstance(b, dict) and b.get("feasible") is True for b in blocks)


FRESH_KIND = "formatting"


def _repeat_calls(run: RunDir, ss: ScoreSet, req: BBERequest) -> tuple[list[PlannedCall], list[UnitKey]]:
    """`--repeats K`: K re-asks of the identical en input of sampled units, each its own call key
    (condition `repeat-i`), so that each is a recorded call and resumes like any other."""
    units = sample_units(ss, req.fresh_units, req.params.seed + REPEAT_SEED)
    return repeat_calls(ss.name, _items(run, req), units, req.repeats or 0), units


def recorded_repeats(run: RunDir) -> int:
    """How many re-asks per unit the run's neighbours file holds (`judge --repeats K`); 0 if none."""
    return repeats_held(run.neighbours().latest())


def _fresh_calls(run: RunDir, ss: ScoreSet, req: BBERequest) -> tuple[list[PlannedCall], list[UnitKey], str]:
    """The calls of `--verify-kind fresh` for one judge: newly drawn units (a seed of their own),
    perturbed by formatting, under a condition name of their own so that no earlier answer is reused."""
    seed = req.params.seed + 1_000_003
    units = sample_units(ss, req.fresh_units, seed)
    calls, _ = _perturbed_calls(_items(run, req), units, kind=FRESH_KIND, judge=ss.name, seed=seed)
    condition = f"fresh-{FRESH_KIND}-{seed}"
    return [dataclasses.replace(c, condition=condition) for c in calls], units, condition


@dataclass
class _Perturbed:
    """`--perturb`: the judge's sampled units and one perturbed call per perturbable unit."""

    ss: ScoreSet
    units: list[UnitKey]
    calls: list[PlannedCall]
    unperturbable: int


@dataclass
class _Rejudging:
    """What a bbe of a run re-judges into its neighbours file, planned before anything is called
    (the same plan prices `bbe --dry-run`): `--perturb`'s calls, the re-asks of `--repeats` (or the
    ones `judge --repeats` made), and `--verify-kind fresh`'s, per judge."""

    sets: list[ScoreSet]  # the sets calibrated: the perturbed judge's alone with --perturb
    template: str | None  # the template's path (None: the default)
    perturbed: _Perturbed | None = None
    repeated: int = 0  # re-asks per unit (`--repeats K`, or what `judge --repeats` recorded)
    repeats: dict[str, tuple[list[PlannedCall], list[UnitKey]]] = field(default_factory=dict)
    fresh: dict[str, tuple[list[PlannedCall], list[UnitKey], str]] = field(default_factory=dict)

    def calls(self) -> list[tuple[str, bool, list[PlannedCall]]]:
        """(judge, whether the response cache may answer, calls) of every re-judging: a cached
        answer would hide a re-ask's jitter."""
        out = [(self.perturbed.ss.name, True, self.perturbed.calls)] if self.perturbed else []
        out += [(name, True, calls) for name, (calls, _, _) in self.fresh.items()]
        out += [(name, False, calls) for name, (calls, _) in self.repeats.items()]
        return out


def _plan_rejudging(run: RunDir, req: BBERequest, sets: Sequence[ScoreSet], *, recorded: bool) -> _Rejudging:
    """The re-judging of `bbe --run` (reads only). `recorded`: use the re-asks `judge --repeats`
    made when `--repeats` is not given (a run reports them, asking nothing new; a dry run prices
    only what it would ask)."""
    spec = req.perturb
    plan = _Rejudging(sets=list(sets), template=_template_path(run, spec.template_path if spec else None))
    if spec is not None:
        names = [s.name for s in sets]
        if spec.model not in names:
            raise ConfigError(f"--model {spec.model} is not a judge of this run; judges: {', '.join(names)}")
        ss = sets[names.index(spec.model)]
        units = sample_units(ss, spec.units, req.params.seed)
        calls, unperturbable = _perturbed_calls(
            _items(run, req), units, kind=spec.kind, judge=spec.model, seed=req.params.seed
        )
        plan.perturbed, plan.sets = _Perturbed(ss, units, calls, unperturbable), [ss]
    plan.repeated = req.repeats or (recorded_repeats(run) if recorded else 0)
    asked = req.model_copy(update={"repeats": plan.repeated})
    for ss in plan.sets if plan.repeated else ():
        calls, units = _repeat_calls(run, ss, asked)
        if not req.repeats:  # made by `judge --repeats K`: reported, nothing asked
            held = run.neighbours().latest()
            calls = [c for c in calls if c.key in held]
            units = list(dict.fromkeys(UnitKey(c.item_id, c.order) for c in calls))
            if not calls:
                continue
        plan.repeats[ss.name] = (calls, units)
    if req.params.verify and req.params.verify_kind == "fresh":
        plan.fresh = {ss.name: _fresh_calls(run, ss, req) for ss in plan.sets}
    return plan


class _Calibrating(Stage[BBEOutcome]):
    """`bbe --run`'s parts for the runner (api/stages.py): the run's score sets read and the
    re-judging planned; under the bbe lock it judges the new neighbours, calibrates, and writes
    bbe.json (the lock: one writer of the neighbours file and of the release)."""

    name = "bbe"
    makes_run = False  # a run that is there: a folder of judgments with no manifest stays without one

    def __init__(self, run: RunDir, req: BBERequest, options: CallOptions, execution: Execution) -> None:
        self.req, self.options, self.execution = req, options, execution
        self.loaded = load_run(run, mode=req.unit_score)
        self.plan = _plan_rejudging(run, req, self.loaded.sets, recorded=True)
        self.template = load_template(self.plan.template)
        held = run.neighbours().latest()
        # (judge, whether the cache may answer): the judges with calls to make
        self.paying = list(
            dict.fromkeys((n, cache) for n, cache, c in self.plan.calls() if pending_calls(c, held))
        )
        self.clients: dict[tuple[str, bool], ModelClient] = {}
        self.unmade: dict[str, int] = {}  # fresh calls counted, left unmade: no release to check

    def keys(self) -> list[JudgeSpec]:
        return [self.options.resolve(name) for name in dict.fromkeys(n for n, _ in self.paying)]

    def connect(self) -> list[ModelClient]:
        fresh = self.options.without_cache()
        self.clients = {(n, c): (self.options if c else fresh).client(n) for n, c in self.paying}
        return list(self.clients.values())

    def progress(self, run: RunDir) -> Counted | None:
        held = run.neighbours().latest()
        total = sum(len(pending_calls(calls, held)) for _, _, calls in self.plan.calls())
        if not total:
            return None
        self.unmade = {
            name: len(pending_calls(calls, held)) for name, (calls, _, _) in self.plan.fresh.items()
        }
        names = dict.fromkeys(client.name for client in self.clients.values())
        return Counted(total, f"bbe neighbours {', '.join(names)}")

    def _rejudge(
        self,
        run: RunDir,
        calls: Sequence[PlannedCall],
        judge: str,
        progress: ProgressReporter,
        *,
        cache: bool,
    ) -> tuple[list[Judgment], int]:
        """Judge `calls` of one judge into the run's neighbours file (execution.rejudge)."""
        client = self.clients.get((judge, cache))
        if client is None:  # none of these calls was pending when the stage began
            client = (self.options if cache else self.options.without_cache()).client(judge)
        sink = run.neighbours()
        return rejudge(calls, client, self.template, sink, execution=self.execution, progress=progress)

    def execute(self, run: RunDir, progress: ProgressReporter) -> BBEOutcome:
        req, plan = self.req, self.plan
        source: dict[str, Any] = {"type": "run", "path": str(run.path), "unit_score": req.unit_score}
        sets, neighbours, outcome = plan.sets, req.neighbours, None
        if plan.perturbed is not None and req.perturb is not None:
            p, spec = plan.perturbed, req.perturb
            answers, failed = self._rejudge(run, p.calls, spec.model, progress, cache=True)
            sets = [with_perturbation_pairs(p.ss, answers, kind=spec.kind, judge=spec.model, units=p.units)]
            neighbours = neighbours or [spec.kind]
            outcome = RejudgeOutcome(
                kind=spec.kind,
                model=spec.model,
                units_sampled=len(p.units),
                requested=len(p.calls),
                failed_calls=failed,
                unperturbable=p.unperturbable,
                file=str(run.neighbours().path),
            )
            source["perturbation"] = outcome.model_dump()
        if plan.repeated:
            sets = [self._with_repeats(run, ss, progress) for ss in sets]
            source["repeats"] = plan.repeated
        neighbours = probe_neighbours(_recorded_probes(run), _kinds(sets), neighbours, req.probes)
        if req.probes:
            source["probes"] = req.probes
        result = calibrate_sets(
            sets, req.params, neighbours=neighbours, source=source, skipped=self.loaded.skipped
        )
        if req.params.verify and req.params.verify_kind == "fresh":
            for out in result.outputs:
                self._fresh_verify(run, out, progress)
        progress.drop(sum(self.unmade.values()))  # counted, never asked: no release to check
        return _release(req, result, outcome)

    def _with_repeats(self, run: RunDir, ss: ScoreSet, progress: ProgressReporter) -> ScoreSet:
        """Judge the re-asks with the cache off (a cached answer would hide the jitter) and add them,
        with each unit's base score, as the set's repeated judgments (PROTOCOL §5's jitter)."""
        if ss.name not in self.plan.repeats:  # `judge --repeats` made none of this judge's
            return ss
        calls, units = self.plan.repeats[ss.name]
        answers, _failed = self._rejudge(run, calls, ss.name, progress, cache=False)
        return with_repeats(ss, units, [j for j in answers if is_repeat(j.condition)])

    def _fresh_verify(self, run: RunDir, out: CalibrationOutput, progress: ProgressReporter) -> None:
        """`--verify-kind fresh`: judge fresh neighbours through the judge stage's execution and count
        violations of the released mechanism (alpha, sigma) on them."""
        block, ss = out.block, out.scores
        params = self.req.params
        if block.sigma is None or block.alpha is None or params.verify is None:
            return
        calls, units, condition = self.plan.fresh[ss.name]  # planned for every calibrated set
        self.unmade.pop(ss.name, None)
        answers, _failed = self._rejudge(run, calls, ss.name, progress, cache=True)
        changes = fresh_changes(ss, answers, kind=condition, units=units)
        if len(changes) == 0:
            raise ConfigError(f"--verify-kind fresh: no fresh neighbour of {ss.name} has a valid answer")
        vspec = VerifySpec(params.tau, params.delta, params.verify, params.seed, 0, "fresh")
        release = (block.certificate or "range", block.alpha, block.sigma)
        judged = f"{len(changes)} newly judged {FRESH_KIND} perturbations of {len(units)} sampled units"
        block.verify = fresh_block(changes, vspec, release, d=block.d, judged=judged)

    def record(self, run: RunDir, result: BBEOutcome) -> BBEStage:
        return BBEStage(
            out=str(result.out),
            feasible=not result.infeasible,
            calibrations=len(result.result.calibrations),
            neighbours_judged=result.perturbation.requested if result.perturbation else 0,
        )


def bbe_estimate(request: BBERequest, *, options: CallOptions | None = None) -> list[Estimate]:
    """`bbe --dry-run`: the calls `--perturb`, `--verify-kind fresh` and `--repeats` would make, with
    their tokens and cost (nothing is called or written). Without them, nothing: bbe makes no calls."""
    req = request
    judges = (options or CallOptions()).judges()
    if req.run is None:
        return []
    run = run_folder(req.run)
    plan = _plan_rejudging(run, req, load_run(run, mode=req.unit_score).sets, recorded=False)
    out: list[Estimate] = []
    # the run's own replies are the best guess at what the re-judged variants' replies cost
    observed = run_figures(run) if run.judgments().path.exists() else None
    template = load_template(plan.template)
    for judge_name, _cache, calls in plan.calls():
        todo = pending_calls(calls, run.neighbours().latest())
        out += [
            e.model_copy(update={"stage": "bbe"})
            for e in estimate_judging(
                calls, todo, template, [judges.resolve(judge_name)], catalog=judges, observed=observed
            )
        ]
    return out


def bbe(
    request: BBERequest,
    *,
    options: CallOptions | None = None,
    execution: Execution | None = None,
    run: RunDir | None = None,
) -> BBEOutcome:
    """Calibrate and release (PROTOCOL §5); writes bbe.json, `<stem>_scores.csv` and `<stem>.png`.

    An infeasible calibration still writes bbe.json (feasible false) and is listed in `infeasible`:
    the caller decides what that means for its exit code. `run`: the caller's `RunDir` for
    `request.run` (`judgebench run` passes the one all its stages share), so what it read is shared.
    A run's bbe goes through the stage runner (its lock, its re-judging's keys and progress, its
    manifest entry); a scores table or an arena-hard folder has no run folder to lock or record in."""
    req = request
    if req.out is not None and req.out.is_dir():  # checked before any work: nothing written, then refused
        raise ConfigError(f"--out {req.out} is a folder; give the path of the bbe.json to write")
    if run is not None and (req.run is None or Path(req.run) != run.path):
        raise ConfigError(f"the run folder given ({run.path}) is not the request's ({req.run})")
    run = run if run is not None else run_folder(req.run) if req.run is not None else None
    if run is not None:
        options, execution = options or CallOptions(), execution or Execution()
        stage = _Calibrating(run, req, options, execution)
        return run_stage(run, stage, options=options, execution=execution)
    if req.calibrate_from is not None and req.scores is not None and req.scale is not None:
        assert req.judge is not None
        result = bbe_from_bridge(
            run_folder(req.calibrate_from), req.judge, req.scores, req.scale, req.params,
            unit_score_mode=req.unit_score,
        )  # fmt: skip
    elif req.scores is not None and req.scale is not None:
        result = bbe_from_table(
            req.scores,
            req.scale,
            req.params,
            judge=req.judge,
            neighbours=req.neighbours,
            factor_scale=req.factor_scale,
        )
    else:
        assert req.arena_hard is not None
        result = bbe_from_arena_hard(req.arena_hard, req.params, baseline=req.baseline)
    return _release(req, result, None)


def _release(req: BBERequest, result: BBERun, outcome: RejudgeOutcome | None) -> BBEOutcome:
    """Write bbe.json and its table and plot; an infeasible release goes beside the last feasible one
    (which stays where the report reads it) unless --out asked for a place."""
    target = req.out or default_out(run=req.run, scores=req.scores, arena=req.arena_hard)
    blocks = result.result.calibrations + result.result.factor_calibrations
    infeasible = [f"{c.judge}: {c.reason}" for c in blocks if not c.feasible]
    kept = None
    if infeasible and req.out is None and _feasible_release(target):
        kept, target = target, target.with_name(f"{target.stem}.infeasible{target.suffix}")
    outputs = write_outputs(result, target, plot=req.plot)
    return BBEOutcome(
        result=result.result,
        outputs=outputs,
        out=target,
        infeasible=infeasible,
        perturbation=outcome,
        kept=kept,
    )
