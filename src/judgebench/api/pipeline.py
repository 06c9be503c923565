"""`judgebench run`: translate -> judge -> bbe -> report in one call, estimated and confirmed first."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from judgebench.api.bbe import BBEOutcome, BBERequest, bbe
from judgebench.api.datasets import run_folder
from judgebench.api.judge import JudgeRequest, JudgeResult, judge, price_judging
from judgebench.api.options import CallOptions, require_keys
from judgebench.api.report import ReadinessDoc, report
from judgebench.api.study import ConditionNames, Study
from judgebench.api.translate import TranslateRequest, TranslateResult, translate
from judgebench.bbe.engine import BBEParams
from judgebench.conditions import SOURCE
from judgebench.config import defaults
from judgebench.costing.estimate import Estimate, after_judging_estimates
from judgebench.data.dataset import sample_variants_path
from judgebench.errors import ConfigError, JudgebenchError
from judgebench.execution import Execution
from judgebench.models import JudgeSpec
from judgebench.records.numbers import NonNegative
from judgebench.store.run_folder import RunDir

Confirm = Callable[[Sequence[Estimate]], bool]


class PipelineRequest(Study):
    """What `judgebench run` asks for: the Study (with no field set: the bundled sample, its zh and ls
    conditions, on the embedded model) and how to run it."""

    skip_bad_rows: bool = False  # hub rows with a null or empty text: left out and counted
    translator: str | None = None  # default: the first judge
    # machine-translate the sample instead of using its bundled variants
    machine_translate: bool = False
    tau: float = defaults.TAU
    delta: float = defaults.DELTA
    max_cost: NonNegative | None = None
    dry_run: bool = False
    until_settled: bool = False  # judge in rounds and stop each judge once settled (issue 18)
    round_items: int = Field(default=defaults.ROUND_ITEMS, ge=1)

    # a study run from scratch: the bundled sample and its zh and ls (the Study's fields, these defaults)
    dataset: str | None = defaults.DATASET
    conditions: ConditionNames = Field(default=defaults.CONDITIONS, validate_default=True)

    @property
    def spec(self) -> str:
        """The dataset asked for (None: the bundled sample)."""
        return self.dataset or defaults.DATASET


class PipelineResult(BaseModel):
    run_dir: Path
    translate: TranslateResult | None = None
    judge: JudgeResult | None = None
    report_html: Path | None = None
    readiness: ReadinessDoc | None = None
    bbe: BBEOutcome | None = None
    bbe_error: str | None = None  # why the A-BB step gave no release (the report stands without it)
    estimates: list[Estimate] = Field(default_factory=list)
    seconds: dict[str, float] = Field(default_factory=dict)


def default_run_dir(dataset: str) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = "".join(ch if ch.isalnum() else "-" for ch in Path(dataset).stem)[:40]
    return Path("runs") / f"{stamp}-{slug}"


def _judge_estimates(run: RunDir, req: PipelineRequest, options: CallOptions) -> list[Estimate]:
    """The judge calls `run` will still make, per judge, before it has made any: the judge stage's own
    dry run, which plans in memory a run with no variants yet (as `plan` does, no run folder): from
    the dataset's own variants where it carries them (M-RewardBench: exact, items missing in a
    language and tie-probes included), the en texts standing in for the other targets'; pending
    calls only (a resumed run's judgments are done)."""
    base = req.request(JudgeRequest, {"dataset": None, "data_dir": None, "conditions": None, "dry_run": True})
    if run.variants().latest():
        return price_judging(run, base, options=options).estimates
    study = base.model_copy(
        update={"dataset": req.dataset, "data_dir": req.data_dir, "conditions": [SOURCE, *req.targets()]}
    )
    return price_judging(run, study, options=options, skip_bad_rows=req.skip_bad_rows).estimates


def _estimates(run: RunDir, req: PipelineRequest, options: CallOptions, translator: str) -> list[Estimate]:
    estimates: list[Estimate] = []
    if not _bundled(req):
        est = translate(run, _translate_request(req, translator, dry_run=True), options=options).estimate
        if est is not None:
            estimates.append(est)
    judging = _judge_estimates(run, req, options)
    judgments = sum(e.calls + e.already_done for e in judging)
    return [*estimates, *judging, *after_judging_estimates(judgments)]


def _bundled(req: PipelineRequest) -> bool:
    return req.dataset == "sample" and not req.machine_translate


def _translate_request(req: PipelineRequest, translator: str, *, dry_run: bool = False) -> TranslateRequest:
    if _bundled(req):
        return req.request(TranslateRequest, {"data_dir": None, "variants_file": sample_variants_path()})
    return req.request(
        TranslateRequest,
        {
            "skip_bad_rows": req.skip_bad_rows,
            "translator": translator,
            "dry_run": dry_run,
            "max_cost": req.max_cost,
        },
    )


def _judgeable(run: RunDir, translated: TranslateResult) -> list[str] | None:
    """None (every condition) after a translate stage that finished; else what the run holds, by
    name: the items that failed are judged in en only and the run says so (render.pipeline)."""
    if translated.outcome is None or not translated.outcome.failed:
        return None
    stage = run.manifest().stages.translate
    return [SOURCE, *(stage.condition_names() if stage else [])]


def _resolve_models(req: PipelineRequest, translator: str, options: CallOptions) -> dict[str, JudgeSpec]:
    """Every spec (or judges.toml name) resolved, once for the whole run: before anything is loaded
    or estimated. The stages below resolve from the same `options.judges()`, reading no file again."""
    return options.judges().resolve_all([*req.models, *([] if _bundled(req) else [translator])])


def _to_call(
    estimates: Sequence[Estimate], judges: Mapping[str, JudgeSpec], translator: str
) -> list[JudgeSpec]:
    """The judges (and the translator) that still have calls to make."""
    out = []
    for e in estimates:
        if e.calls > 0:
            out.append(judges[translator] if e.stage == "translate" else judges[e.model])
    return out


def run_pipeline(
    run_dir: str | Path | None = None,
    request: PipelineRequest | None = None,
    *,
    options: CallOptions | None = None,
    execution: Execution | None = None,
    confirm: Confirm | None = None,
) -> PipelineResult:
    """translate -> judge -> bbe -> report (bbe reads only the judgments, so the report can show it).

    The offline default needs no machine translation unless `machine_translate` is set. Before any
    paid call, `confirm(estimates)` must return True (the CLI asks; --yes skips). `dry_run` stops after
    the estimates of the whole study: nothing is called and no run folder is made. `run_dir` None:
    a new folder under ./runs/. One `RunDir` serves every stage: a file one stage read or appended
    to is not read again by the next."""
    req = request or PipelineRequest()
    options = options or CallOptions()
    execution = execution or Execution()
    run = run_folder(run_dir if run_dir else default_run_dir(req.spec))
    translator = req.translator or req.models[0]
    judges = _resolve_models(req, translator, options)  # a bad spec: before anything is estimated
    result = PipelineResult(run_dir=run.path, estimates=_estimates(run, req, options, translator))
    if req.dry_run:
        return result
    # every model with calls still to make has its key, before the question and the run folder
    require_keys(_to_call(result.estimates, judges, translator))
    paid = [e for e in result.estimates if e.cost_live_usd is None or e.cost_live_usd > 0]
    if paid and confirm is not None and not confirm(result.estimates):
        raise ConfigError("stopped before spending anything (rerun with --yes to skip the question)")
    clock = time.perf_counter()
    result.translate = translate(
        run, _translate_request(req, translator), options=options, execution=execution
    )
    result.seconds["translate"] = time.perf_counter() - clock
    clock = time.perf_counter()
    judging = req.request(
        JudgeRequest,
        {
            "dataset": None,  # the run's, as translate recorded it
            "data_dir": None,
            "conditions": _judgeable(run, result.translate),
            # the run's cap: the judge stage counts what translate (and any earlier command) paid
            "max_cost": req.max_cost,
            "until_settled": req.until_settled,
            "round_items": req.round_items,
        },
    )
    result.judge = judge(run, judging, options=options, execution=execution)
    result.seconds["judge"] = time.perf_counter() - clock
    # bbe reads only the judgments; it runs before the report so that report.html shows its rankings.
    # Judge-LS sensitivities (0.3-0.6) need shrinkage at (0.5, 0.01): alpha auto.
    clock = time.perf_counter()
    try:
        params = BBEParams(tau=req.tau, delta=req.delta, alpha=None)
        result.bbe = bbe(BBERequest(params=params, run=run.path), run=run)
    except JudgebenchError as exc:  # e.g. no judge with a valid verdict: the report stands without it
        result.bbe_error = str(exc)
    result.seconds["bbe"] = time.perf_counter() - clock
    clock = time.perf_counter()
    reported = report(run)
    result.report_html, result.readiness = reported.paths.report_html, reported.readiness
    result.seconds["report"] = time.perf_counter() - clock
    return result
