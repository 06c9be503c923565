"""The bbe stage: calibrate A-BB releases of a Judge-LS run, a scores table or an arena-hard-auto
folder, write bbe.json with its scores and plot, and (with --perturb) judge new neighbours first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgebench.api.datasets import open_dataset
from judgebench.api.options import CallOptions
from judgebench.api.rejudge import RejudgeOutcome, perturbed_calls, rejudge
from judgebench.api.requests import build_request
from judgebench.bbe.engine import BBEParams, BBERun
from judgebench.bbe.neighbours import NEIGHBOURS_FILE, PerturbKind
from judgebench.bbe.outputs import default_out, write_outputs
from judgebench.bbe.scores import UnitScoreMode, load_run
from judgebench.bbe.sources import (
    bbe_from_arena_hard,
    bbe_from_table,
    calibrate_sets,
    sample_units,
    with_perturbation_pairs,
)
from judgebench.errors import ConfigError
from judgebench.execution import Execution
from judgebench.records.bbe import BBEResult
from judgebench.records.manifest import BBEStage
from judgebench.rundir import RunDir, safe_run_path


class PerturbRequest(BaseModel):
    """`--perturb KIND --model M`: re-judge a sample of M's en units with one perturbation each."""

    model_config = ConfigDict(extra="forbid")

    kind: PerturbKind
    model: str
    units: int | None = Field(default=200, ge=1)  # None: every en unit
    dataset: str | None = None  # default: the run's
    data_dir: str | None = None
    template_path: str | None = None  # default: the template the run's judge stage used


class BBERequest(BaseModel):
    """What `judgebench bbe` asks for (INTERFACE.md): parameters, one source, and what to write."""

    model_config = ConfigDict(extra="forbid")

    params: BBEParams
    run: Path | None = None
    scores: Path | None = None
    scale: tuple[float, float] | None = None
    factor_scale: tuple[float, float] | None = None
    arena_hard: Path | None = None
    baseline: str | None = None
    judge: str | None = None  # the judge of a --scores table (default: the file's stem)
    neighbours: list[str] | None = None
    unit_score: UnitScoreMode = "auto"
    perturb: PerturbRequest | None = None
    out: Path | None = None
    plot: bool = True

    @model_validator(mode="after")
    def _one_source(self) -> BBERequest:
        if sum(x is not None for x in (self.run, self.scores, self.arena_hard)) != 1:
            raise ValueError("give exactly one of --run DIR, --scores FILE --scale MIN MAX, --arena-hard DIR")
        if self.scores is not None and self.scale is None:
            raise ValueError("--scores needs --scale MIN MAX (the declared range, never the observed one)")
        if self.perturb is not None and self.run is None:
            raise ValueError("--perturb re-judges units of a Judge-LS run: give --run DIR")
        return self

    def source_kind(self) -> Literal["run", "scores", "arena-hard"]:
        return "run" if self.run is not None else "scores" if self.scores is not None else "arena-hard"


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


def _from_run(
    run: Path, req: BBERequest, options: CallOptions, execution: Execution
) -> tuple[BBERun, RejudgeOutcome | None]:
    loaded = load_run(run, mode=req.unit_score)
    source: dict[str, Any] = {"type": "run", "path": str(run), "unit_score": req.unit_score}
    sets, neighbours, outcome = loaded.sets, req.neighbours, None
    spec = req.perturb
    if spec is not None:
        names = [s.name for s in sets]
        if spec.model not in names:
            raise ConfigError(f"--model {spec.model} is not a judge of this run; judges: {', '.join(names)}")
        rundir = RunDir(run)
        ss = sets[names.index(spec.model)]
        units = sample_units(ss, spec.units, req.params.seed)
        items = open_dataset(rundir, spec.dataset, spec.data_dir).by_id()
        calls, unperturbable = perturbed_calls(
            items, units, kind=spec.kind, judge=spec.model, seed=req.params.seed
        )
        template = _template_path(rundir, spec.template_path)
        answers, failed = rejudge(
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
            file=str(run / NEIGHBOURS_FILE),
        )
        source["perturbation"] = outcome.model_dump()
    result = calibrate_sets(sets, req.params, neighbours=neighbours, source=source, skipped=loaded.skipped)
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


def bbe(
    request: BBERequest | None = None,
    *,
    options: CallOptions | None = None,
    execution: Execution | None = None,
    **fields: Any,
) -> BBEOutcome:
    """Calibrate and release (PROTOCOL §5); writes bbe.json, `<stem>_scores.csv` and `<stem>.png`.

    An infeasible calibration still writes bbe.json (feasible false) and is listed in `infeasible`:
    the caller decides what that means for its exit code."""
    req = build_request(BBERequest, request, fields)
    if req.out is not None and req.out.is_dir():  # checked before any work: nothing written, then refused
        raise ConfigError(f"--out {req.out} is a folder; give the path of the bbe.json to write")
    outcome = None
    if req.run is not None:
        run = safe_run_path(req.run)
        result, outcome = _from_run(run, req, options or CallOptions(), execution or Execution())
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
    if req.run is not None and RunDir(req.run).exists():
        entry = BBEStage(
            out=str(target),
            feasible=not infeasible,
            calibrations=len(result.result.calibrations),
            neighbours_judged=outcome.requested if outcome else 0,
        )
        RunDir(req.run).record_stage("bbe", entry)
    return BBEOutcome(
        result=result.result,
        outputs=outputs,
        out=target,
        infeasible=infeasible,
        perturbation=outcome,
        kept=kept,
    )
