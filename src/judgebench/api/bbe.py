"""The bbe stage: calibrate A-BB releases of a Judge-LS run, a scores table or an arena-hard-auto
folder, write bbe.json with its scores and plot, and (with --perturb) judge new neighbours first."""

from __future__ import annotations

import dataclasses
import json
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from judgebench.api.datasets import open_dataset, run_folder
from judgebench.api.options import CallOptions
from judgebench.api.probing import probe_neighbours
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


def _rejudge(
    run: RunDir,
    calls: Sequence[PlannedCall],
    *,
    judge: str,
    template_path: str | None,
    options: CallOptions,
    execution: Execution,
) -> tuple[list[Judgment], int]:
    """Judge `calls` of one judge into the run's neighbours file (execution.rejudge)."""
    template = load_template(template_path)
    client = options.client(judge)
    sink = run.neighbours()
    return rejudge(calls, client, template, sink, execution=execution, progress=options.progress)


def _recorded_probes(run: RunDir) -> dict[str, ProbeEntry]:
    stage = run.manifest().stages.judge
    return dict(stage.probes) if stage else {}


def _kinds(sets: Sequence[ScoreSet]) -> set[str]:
    return {str(k) for s in sets for k in (*s.pair_kind, *s.invalid_kind)}


def _from_run(
    run: RunDir, req: BBERequest, options: CallOptions, execution: Execution
) -> tuple[BBERun, RejudgeOutcome | None]:
    loaded = load_run(run, mode=req.unit_score)
    source: dict[str, Any] = {"type": "run", "path": str(run.path), "unit_score": req.unit_score}
    sets, neighbours, outcome = loaded.sets, req.neighbours, None
    spec = req.perturb
    if spec is not None:
        names = [s.name for s in sets]
        if spec.model not in names:
            raise ConfigError(f"--model {spec.model} is not a judge of this run; judges: {', '.join(names)}")
        ss = sets[names.index(spec.model)]
        units = sample_units(ss, spec.units, req.params.seed)
        calls, unperturbable = _perturbed_calls(
            _items(run, req), units, kind=spec.kind, judge=spec.model, seed=req.params.seed
        )
        template = _template_path(run, spec.template_path)
        with run.lock("bbe", wait=options.wait_lock):  # one writer of the neighbours file
            answers, failed = _rejudge(
                run, calls, judge=spec.model, template_path=template, options=options, execution=execution
            )
        sets = [with_perturbation_pairs(ss, answers, kind=spec.kind, judge=spec.model, units=units)]
        neighbours = neighbours or [spec.kind]
        outcome = RejudgeOutcome(
            kind=spec.kind,
            model=spec.model,
            units_sampled=len(units),
            requested=len(calls),
            failed_calls=failed,
            unperturbable=unperturbable,
            file=str(run.neighbours().path),
        )
        source["perturbation"] = outcome.model_dump()
    if req.repeats:
        sets = [_with_repeats(run, ss, req, options, execution) for ss in sets]
        source["repeats"] = req.repeats
    elif (held := recorded_repeats(run)) > 0:  # made by `judge --repeats K`: reported, nothing asked
        recorded = req.model_copy(update={"repeats": held})
        sets = [_with_repeats(run, ss, recorded, options, execution, only_recorded=True) for ss in sets]
        source["repeats"] = held
    neighbours = probe_neighbours(_recorded_probes(run), _kinds(sets), neighbours, req.probes)
    if req.probes:
        source["probes"] = req.probes
    result = calibrate_sets(sets, req.params, neighbours=neighbours, source=source, skipped=loaded.skipped)
    if req.params.verify and req.params.verify_kind == "fresh":
        for out in result.outputs:
            _fresh_verify(run, out, req, options, execution)
    return result, outcome


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


def _with_repeats(
    run: RunDir,
    ss: ScoreSet,
    req: BBERequest,
    options: CallOptions,
    execution: Execution,
    *,
    only_recorded: bool = False,
) -> ScoreSet:
    """Judge the re-asks with the cache off (a cached answer would hide the jitter) and add them, with
    each unit's base score, as the set's repeated judgments (PROTOCOL §5's jitter). `only_recorded`:
    use the re-asks `judge --repeats` already made, asking nothing new."""
    calls, units = _repeat_calls(run, ss, req)
    template = _template_path(run, req.perturb.template_path if req.perturb else None)
    if only_recorded:
        held = run.neighbours().latest()
        calls = [c for c in calls if c.key in held]
        units = list(dict.fromkeys(UnitKey(c.item_id, c.order) for c in calls))
        if not calls:
            return ss
    fresh_options = options.without_cache()
    answers, _failed = _rejudge(
        run, calls, judge=ss.name, template_path=template, options=fresh_options, execution=execution
    )
    return with_repeats(ss, units, [j for j in answers if is_repeat(j.condition)])


def _fresh_calls(run: RunDir, ss: ScoreSet, req: BBERequest) -> tuple[list[PlannedCall], list[UnitKey], str]:
    """The calls of `--verify-kind fresh` for one judge: newly drawn units (a seed of their own),
    perturbed by formatting, under a condition name of their own so that no earlier answer is reused."""
    seed = req.params.seed + 1_000_003
    units = sample_units(ss, req.fresh_units, seed)
    calls, _ = _perturbed_calls(_items(run, req), units, kind=FRESH_KIND, judge=ss.name, seed=seed)
    condition = f"fresh-{FRESH_KIND}-{seed}"
    return [dataclasses.replace(c, condition=condition) for c in calls], units, condition


def _fresh_verify(
    run: RunDir, out: CalibrationOutput, req: BBERequest, options: CallOptions, execution: Execution
) -> None:
    """`--verify-kind fresh`: judge fresh neighbours through the judge stage's execution and count
    violations of the released mechanism (alpha, sigma) on them."""
    block, ss = out.block, out.scores
    params = req.params
    if block.sigma is None or block.alpha is None or params.verify is None:
        return
    calls, units, condition = _fresh_calls(run, ss, req)
    template = _template_path(run, req.perturb.template_path if req.perturb else None)
    answers, _failed = _rejudge(
        run, calls, judge=ss.name, template_path=template, options=options, execution=execution
    )
    changes = fresh_changes(ss, answers, kind=condition, units=units)
    if len(changes) == 0:
        raise ConfigError(f"--verify-kind fresh: no fresh neighbour of {ss.name} has a valid answer")
    vspec = VerifySpec(params.tau, params.delta, params.verify, params.seed, 0, "fresh")
    release = (block.certificate or "range", block.alpha, block.sigma)
    judged = f"{len(changes)} newly judged {FRESH_KIND} perturbations of {len(units)} sampled units"
    block.verify = fresh_block(changes, vspec, release, d=block.d, judged=judged)


def bbe_estimate(request: BBERequest, *, options: CallOptions | None = None) -> list[Estimate]:
    """`bbe --dry-run`: the calls `--perturb`, `--verify-kind fresh` and `--repeats` would make, with
    their tokens and cost (nothing is called or written). Without them, nothing: bbe makes no calls."""
    req = request
    judges = (options or CallOptions()).judges()
    if req.run is None:
        return []
    run = run_folder(req.run)
    sets = load_run(run, mode=req.unit_score).sets
    plans: list[tuple[str, list[PlannedCall], str | None]] = []
    spec = req.perturb
    if spec is not None:
        ss = next((s for s in sets if s.name == spec.model), None)
        if ss is None:
            raise ConfigError(f"--model {spec.model} is not a judge of this run")
        units = sample_units(ss, spec.units, req.params.seed)
        calls, _ = _perturbed_calls(
            _items(run, req), units, kind=spec.kind, judge=spec.model, seed=req.params.seed
        )
        plans.append((spec.model, calls, spec.template_path))
    if req.params.verify and req.params.verify_kind == "fresh":
        for ss in sets:
            plans.append((ss.name, _fresh_calls(run, ss, req)[0], spec.template_path if spec else None))
    if req.repeats:
        for ss in sets:
            plans.append((ss.name, _repeat_calls(run, ss, req)[0], spec.template_path if spec else None))
    out: list[Estimate] = []
    # the run's own replies are the best guess at what the re-judged variants' replies cost
    observed = run_figures(run) if run.judgments().path.exists() else None
    for judge_name, calls, template_path in plans:
        template = load_template(_template_path(run, template_path))
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
    `request.run` (`judgebench run` passes the one all its stages share), so what it read is shared."""
    req = request
    if req.out is not None and req.out.is_dir():  # checked before any work: nothing written, then refused
        raise ConfigError(f"--out {req.out} is a folder; give the path of the bbe.json to write")
    outcome = None
    if run is not None and (req.run is None or Path(req.run) != run.path):
        raise ConfigError(f"the run folder given ({run.path}) is not the request's ({req.run})")
    run = run if run is not None else run_folder(req.run) if req.run is not None else None
    if run is not None:
        result, outcome = _from_run(run, req, options or CallOptions(), execution or Execution())
    elif req.calibrate_from is not None and req.scores is not None and req.scale is not None:
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
    target = req.out or default_out(run=req.run, scores=req.scores, arena=req.arena_hard)
    blocks = result.result.calibrations + result.result.factor_calibrations
    infeasible = [f"{c.judge}: {c.reason}" for c in blocks if not c.feasible]
    kept = None
    if infeasible and req.out is None and _feasible_release(target):
        # the last good release stays where the report reads it; this one goes beside it (--out: asked)
        kept, target = target, target.with_name(f"{target.stem}.infeasible{target.suffix}")
    outputs = write_outputs(result, target, plot=req.plot)
    if run is not None and run.exists():
        entry = BBEStage(
            out=str(target),
            feasible=not infeasible,
            calibrations=len(result.result.calibrations),
            neighbours_judged=outcome.requested if outcome else 0,
        )
        run.record_stage("bbe", entry)
    return BBEOutcome(
        result=result.result,
        outputs=outputs,
        out=target,
        infeasible=infeasible,
        perturbation=outcome,
        kept=kept,
    )
