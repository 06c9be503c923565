"""The planted-bias self-test: run the whole pipeline on simulated judges whose biases are known and
check that the report recovers them.

Two `sim:` judges judge a synthetic set: `selftest-biased` (position bias, ties, invalid replies,
planted language flips, a tie-probe preference) and `selftest-unbiased` (none of these). For every
planted quantity the expected value of its metric has a closed form (below); the check passes when
that value lies inside the report's interval. Intervals are taken at 99.9% confidence so that a correct
pipeline fails a seed with probability well under 2% across the ~10 checks (a 95% interval would fail
about 40% of seeds by chance alone).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgebench.analysis import ReadinessVerdict, ReportSettings
from judgebench.api.bbe import BBERequest, bbe
from judgebench.api.datasets import run_folder
from judgebench.api.judge import JudgeRequest, judge
from judgebench.api.options import CallOptions
from judgebench.api.report import ReportRequest, report
from judgebench.api.translate import TranslateRequest, translate
from judgebench.bbe.engine import BBEParams
from judgebench.config import defaults
from judgebench.data.llmbar import LLMBAR_SUBSETS
from judgebench.models import SettingsOverrides
from judgebench.models.sim import SimScenario, load_scenario
from judgebench.records import MetricRecord

BIASED = "selftest-biased"
UNBIASED = "selftest-unbiased"
# judges that must get no pass: invariant across languages because they do not judge at all
DEGENERATE = {
    "selftest-always-a": 'answers "A" whatever it is shown',
    "selftest-always-tie": 'answers "Tie" to everything',
    "selftest-coin": "picks at random",
}
CONFIDENCE = 0.999
ALPHA = 1 - CONFIDENCE


@dataclass
class Check:
    """One row of the self-test: `what` says in words what it checks; numbers for planted values,
    `want` / `got` for verdicts."""

    judge: str
    what: str
    expected: float | None
    observed: float | None
    low: float | None
    high: float | None
    passed: bool
    detail: str = ""
    want: str | None = None
    got: str | None = None


@dataclass
class SelftestResult:
    run_dir: Path | None  # None: a temporary folder, removed once checked (pass run_dir to keep it)
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)


def expected_values(s: SimScenario, conditions: Sequence[str]) -> dict[tuple[str, str], float]:
    """Closed-form expectations of the simulated judge's metrics (see models/sim.py).

    With tie rate t, position bias p, accuracy a, and the gold output shown as A in exactly one of an
    item's two orders: valid en verdicts are correct with probability q = (1-t)(p/2 + (1-p)a), answer A
    with probability r = (1-t)(p + (1-p)/2); a planted flip (rate f) replaces the en verdict by one of
    the two others at random, so in condition c: correct (1-f)q + f(1-q)/2, A (1-f)r + f(1-r)/2, Tie
    (1-f)t + f(1-t)/2, and the en->c flip rate is f. Invalid replies (rate i) are independent of all
    this: strict accuracy over answered judgments is (1-i) times the valid-verdict accuracy.
    """
    t, p, a, i = s.tie_rate, s.pos("en"), s.acc("en"), s.invalid_rate
    q = (1 - t) * (p / 2 + (1 - p) * a)
    r = (1 - t) * (p + (1 - p) / 2)
    out: dict[tuple[str, str], float] = {}
    for cond in ["en", *conditions]:
        f = 0.0 if cond == "en" else s.flip_rate.get(cond, 0.0)
        out[("strict_accuracy", cond)] = (1 - i) * ((1 - f) * q + f * (1 - q) / 2)
        out[("position_a_rate", cond)] = (1 - f) * r + f * (1 - r) / 2
        out[("tie_rate", cond)] = (1 - f) * t + f * (1 - t) / 2
        out[("invalid_rate", cond)] = i
        if cond != "en":
            out[("flip_rate", f"en->{cond}")] = f
    out[("tie_probe_tie", "zh")] = s.tie_probe_tie
    out[("tie_probe_en_share", "zh")] = s.tie_probe_en_share
    return out


def synthetic_items(n: int, path: Path, variants_path: Path) -> None:
    """n labelled items over the five subsets, with placeholder zh/ls variants (the sim reads no text)."""
    subsets = list(LLMBAR_SUBSETS)
    items, variants = [], []
    for k in range(n):
        subset = subsets[k % len(subsets)]
        item_id = f"{subset}/{k // len(subsets)}"
        items.append(
            {
                "id": item_id,
                "subset": subset,
                "instruction": f"Synthetic instruction {k}",
                "output_1": f"first answer {k}",
                "output_2": f"second answer {k}",
                "label": 1 + (k * 7 % 3 == 0),
            }
        )
        for cond in ("zh", "ls"):
            zh = cond == "zh"
            variants.append(
                {
                    "item_id": item_id,
                    "condition": cond,
                    "instruction": f"合成指令 {k}" if zh else f"合成 instruction {k}",
                    "output_1": f"第一个回答 {k}" if zh else f"第一个 answer {k}",
                    "output_2": f"第二个回答 {k}" if zh else f"第二个 answer {k}",
                }
            )
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items), encoding="utf-8")
    variants_path.write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in variants), encoding="utf-8"
    )


def _find(records: Sequence[MetricRecord], judge: str, metric: str, condition: str) -> MetricRecord | None:
    for rec in records:
        if (rec.judge, rec.metric, rec.condition, rec.subset, rec.filtered) == (
            judge,
            metric,
            condition,
            "all",
            False,
        ):
            return rec
    return None


def _recovery_checks(records: Sequence[MetricRecord], judges: dict[str, str]) -> list[Check]:
    """Every planted value of the two calibrated judges inside the report's interval."""
    checks = []
    for name, spec in judges.items():
        scenario = load_scenario(name)
        for (metric, cond), expected in expected_values(scenario, ["zh", "ls"]).items():
            what = f"planted {metric} in {cond} recovered"
            rec = _find(records, spec, metric, cond)
            if rec is None or rec.value is None:
                checks.append(Check(spec, what, expected, None, None, None, False, "metric missing"))
                continue
            low, high = rec.ci_low, rec.ci_high
            if low is None or high is None:
                ok = abs(rec.value - expected) < 1e-9
            else:
                ok = low - 1e-9 <= expected <= high + 1e-9
            checks.append(Check(spec, what, expected, rec.value, low, high, ok))
    return checks


def _verdict_check(verdict: ReadinessVerdict, *, want: str, why: str) -> Check:
    """A readiness verdict that must be `want`; `fail` wants the failing part's reason too."""
    ok = verdict.status == want if want != "no pass" else verdict.status != "pass"
    return Check(
        verdict.judge,
        f"{verdict.condition} verdict must be {want.upper()} ({why})",
        None,
        None,
        None,
        None,
        ok,
        "; ".join(verdict.reasons)
        if not ok
        else f"baseline {verdict.baseline}, invariance {verdict.invariance}",
        want=want,
        got=verdict.status,
    )


def _readiness_checks(verdicts: Sequence[ReadinessVerdict], judges: dict[str, str]) -> list[Check]:
    checks = []
    for verdict in verdicts:
        name = next((n for n, spec in judges.items() if spec == verdict.judge), "")
        if name == UNBIASED:
            checks.append(_verdict_check(verdict, want="pass", why="no planted bias"))
        elif name == BIASED and verdict.condition == "ls":
            checks.append(_verdict_check(verdict, want="fail", why="planted 28% language flips"))
        elif name in DEGENERATE:
            check = _verdict_check(verdict, want="no pass", why=f"it {DEGENERATE[name]}")
            # and it is the baseline (en) that says so, with its reason
            check.passed = check.passed and verdict.baseline == "fail"
            checks.append(check)
    return checks


def _no_flag_checks(records: Sequence[MetricRecord], unbiased: str) -> list[Check]:
    """The unbiased judge raises no flag: no test of it is significant at ALPHA."""
    checks = []
    for rec in records:
        flagged = rec.p is not None and rec.p < ALPHA
        if rec.judge == unbiased and rec.subset == "all" and not rec.filtered and flagged:
            detail = f"p = {rec.p:.2g} < {ALPHA}"
            what = f"no flag raised on {rec.metric} {rec.condition}"
            checks.append(Check(unbiased, what, ALPHA, rec.p, None, None, False, detail))
    return checks


def run_selftest(
    seed: int = 0, *, items: int = 400, run_dir: Path | None = None, verify: int = 400
) -> SelftestResult:
    """Run translate (import) -> judge -> report -> bbe on simulated judges and check recovery: two
    calibrated ones (biased, unbiased) and three degenerate ones that must get no pass. Without
    `run_dir` the run lives in a temporary folder, removed afterwards (result.run_dir None)."""
    if run_dir is None:
        with tempfile.TemporaryDirectory(prefix="judgebench-selftest-") as tmp:
            result = _selftest(seed, items, Path(tmp), verify)
        result.run_dir = None
        return result
    return _selftest(seed, items, run_folder(run_dir).path, verify)


def _selftest(seed: int, items: int, base: Path, verify: int) -> SelftestResult:
    base.mkdir(parents=True, exist_ok=True)
    data, variants = base / "selftest_items.jsonl", base / "selftest_variants.jsonl"
    synthetic_items(items, data, variants)
    run = base / "run"
    translate(run, TranslateRequest(dataset=str(data), variants_file=variants))
    judges = {BIASED: f"sim:{BIASED}/{seed * 2 + 1}", UNBIASED: f"sim:{UNBIASED}/{seed * 2 + 2}"}
    judges.update({name: f"sim:{name}/{seed + 100 + i}" for i, name in enumerate(DEGENERATE)})
    judge(
        run,
        JudgeRequest(models=list(judges.values())),
        options=CallOptions(settings=SettingsOverrides(concurrency=64), use_cache=False),
    )
    settings = ReportSettings(confidence=CONFIDENCE, bootstrap_samples=200, seed=seed)
    analysis = report(run, ReportRequest(settings=settings)).analysis
    result = SelftestResult(run_dir=run)
    calibrated = {name: judges[name] for name in (BIASED, UNBIASED)}
    result.checks += _recovery_checks(analysis.records, calibrated)
    result.checks += _readiness_checks(analysis.readiness, judges)
    result.checks += _no_flag_checks(analysis.records, judges[UNBIASED])
    result.checks.append(_bbe_check(run, seed, verify, list(calibrated.values())))
    result.checks.append(_bridge_check(run, judges, seed, verify))
    return result


def _bridge_check(run: Path, judges: dict[str, str], seed: int, verify: int) -> Check:
    """The bridge (PROTOCOL §5b): calibrate on each judge's Judge-LS neighbours in the run, release a
    planted leaderboard (five systems 0.1 apart in win rate); the planted language bias must show as a
    larger sensitivity, and each release must keep the planted order noise-free, carry its transfer
    assumption and pass its out-of-sample verification."""
    table = run.parent / "selftest_leaderboard.csv"
    rows = ["system,unit,context,score"]
    for k, rate in enumerate((0.8, 0.7, 0.6, 0.5, 0.4)):
        rows += [f"system-{k},prompt-{u},base,{1 if (u * 37 % 100) < rate * 100 else 0}" for u in range(100)]
    table.write_text("\n".join(rows) + "\n")
    params = BBEParams(tau=defaults.TAU, delta=defaults.DELTA, seed=seed, verify=verify, alpha=None)
    sensitivity: dict[str, float] = {}
    for name in (BIASED, UNBIASED):
        spec = judges[name]
        out = run.parent / f"selftest_leaderboard_{name}.json"
        request = BBERequest(
            params=params, scores=table, scale=(0, 1), judge=spec, calibrate_from=run, out=out, plot=False
        )
        res = bbe(request)
        block = res.result.calibrations[0]
        v, u = block.verify, res.result.utility
        ok = (
            block.feasible
            and v is not None
            and v.passed is True
            and u is not None
            and u.noise_free_order_kept is True
            and bool(res.result.transfer_assumption)
        )
        if not ok:
            detail = (
                f"feasible {block.feasible}, verify passed {None if v is None else v.passed}, noise-free "
                f"order kept {None if u is None else u.noise_free_order_kept}"
            )
            observed = None if v is None else v.rate
            return Check(spec, "bbe bridge release", params.delta, observed, None, None, False, detail)
        sensitivity[name] = block.sensitivity_plugin
    ok = sensitivity[BIASED] > sensitivity[UNBIASED]
    detail = f"sensitivity biased {sensitivity[BIASED]:.3f} vs unbiased {sensitivity[UNBIASED]:.3f}"
    what = "bbe bridge: planted bias -> larger sensitivity"
    return Check(judges[BIASED], what, 0.0, sensitivity[BIASED], None, None, ok, detail)


def _bbe_check(run: Path, seed: int, verify: int, judges: Sequence[str]) -> Check:
    params = BBEParams(tau=defaults.TAU, delta=defaults.DELTA, seed=seed, verify=verify, alpha=None)
    outcome = bbe(BBERequest(params=params, run=run)).result
    worst: Check | None = None
    for block in outcome.calibrations:
        if block.judge not in judges:
            continue
        v = block.verify
        if not block.feasible or v is None:
            why = "infeasible or not verified"
            return Check(block.judge, "bbe guarantee", params.delta, None, None, None, False, why)
        # the default release carries over to new items (issue 28) and its verification is of it
        ok = v.passed is True and block.carries_over is True and v.certificate == block.certificate
        detail = (
            f"certificate {block.certificate} (carries over: {block.carries_over}), verified {v.certificate}"
        )
        what = "bbe violation rate <= delta"
        check = Check(block.judge, what, params.delta, v.rate, v.ci_low, v.ci_high, ok, "" if ok else detail)
        if worst is None or not ok:
            worst = check
    return worst or Check("-", "bbe guarantee", params.delta, None, None, None, False, "no calibration")
