"""PROTOCOL §5b through the library: each certificate's sigma against an independent scipy computation,
comparable releases, verification that can fail, utility, and the bridge.

The independent computations read judgments.jsonl / the table themselves and use scipy.stats directly
(ncx2, binom, norm), never the code under test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from judgebench import api
from judgebench.bbe.verify import norm_violations
from judgebench.records.bbe_document import Calibration
from tests.bbe.helpers import write_run

REPO = Path(__file__).resolve().parents[2]
ARENA = REPO / "data" / "bbe" / "arena-hard" / "model_judgment" / "gpt-4.1-mini"
SCORE = {"1": 1.0, "2": 0.0, "tie": 0.5}
TAU, DELTA = 0.5, 0.01


def _changes(run: Path, judge: str) -> np.ndarray:
    """|change| of every (en unit, neighbour) pair with valid verdicts, from judgments.jsonl directly."""
    table: dict[tuple[str, str, str], str | None] = {}
    for line in (run / "judgments.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["judge"] == judge and rec["kind"] == "pair":
            table[(rec["item_id"], rec["condition"], rec["order"])] = rec["verdict"]
    out = []
    for (item, cond, order), verdict in table.items():
        if cond != "en" or verdict not in SCORE:
            continue
        other = "swap" if order == "orig" else "orig"
        for key in ((item, "zh", order), (item, "ls", order), (item, "en", other)):
            nb = table.get(key)
            if nb in SCORE:
                out.append(abs(SCORE[nb] - SCORE[verdict]))
    return np.asarray(out)


def _radius(d: int, delta_noise: float) -> float:
    big_l = math.log(1 / delta_noise)
    return math.sqrt(2 * (d + 2 * math.sqrt(d * big_l) + 2 * big_l))


def _exact_v(changes: np.ndarray, alpha: float, sigma: float, d: int) -> float:
    s2 = 2 * sigma**2
    return float(np.mean([stats.ncx2.sf(TAU**2 / s2, d, (alpha * c) ** 2 / s2) if c > 0 else
                          stats.chi2.sf(TAU**2 / s2, d) for c in changes]))  # fmt: skip


def _release(run: Path, **params: object) -> api.BBEOutcome:
    return api.bbe(api.BBERequest(params=api.BBEParams(tau=TAU, delta=DELTA, **params), run=run, plot=False))


def _cert(cal: Calibration, name: str) -> dict[str, float | None]:
    rows = {r.name: r for r in cal.certificates}
    return rows[name].model_dump()


def test_every_certificate_sigma_matches_scipy(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.2}, items=40)
    cal = _release(run, alpha=None, certificate="exact").result.calibrations[0]
    changes = _changes(run, "j")
    d, alpha = 80, cal.alpha
    assert cal.d == d and cal.certificate == "exact" and cal.sensitivity_source == "measured"
    assert cal.carries_over is False and cal.scope is not None and "in-sample" in cal.scope
    assert alpha is not None and cal.sigma is not None
    # exact: v(sigma) = delta exactly (tight) and any larger sigma violates
    assert _exact_v(changes, alpha, cal.sigma, d) == pytest.approx(DELTA, rel=1e-6)
    assert _exact_v(changes, alpha, cal.sigma * 1.01, d) > DELTA
    assert cal.violation_probability == pytest.approx(DELTA, rel=1e-6)
    # exact's alpha_max: tau / the smallest change size whose larger changes have share <= delta
    sizes = np.unique(changes)
    c_star = min(c for c in sizes if np.mean(changes > c) <= DELTA)
    assert _cert(cal, "exact")["alpha_max"] == pytest.approx(TAU / c_star)
    assert alpha == pytest.approx(0.5 * TAU / c_star)  # auto: margin 0.5 of the feasible range
    # range: b = 1, all of delta to the noise
    assert _cert(cal, "range")["sigma"] == pytest.approx((TAU - alpha) / _radius(d, DELTA), rel=1e-9)
    # markov: b = Delta / sqrt(delta / 2), delta / 2 to the noise
    rms = math.sqrt(float(np.mean(changes**2)))
    assert cal.sensitivity_plugin == pytest.approx(rms)
    markov = _cert(cal, "markov")
    assert markov["alpha_max"] == pytest.approx(TAU * math.sqrt(DELTA / 2) / rms)
    expected = (TAU - alpha * rms / math.sqrt(DELTA / 2)) / _radius(d, DELTA / 2)
    assert markov["sigma"] == (pytest.approx(expected) if expected > 0 else None)
    # quantile (over the 40 items): Pr(Binomial(40, p) >= 40) > delta_estimate, so no r qualifies
    assert stats.binom.sf(40 - 1, 40, 1 - 0.0045) > 0.001
    assert "quantile" not in {r.name for r in cal.certificates}


def test_quantile_certificate_matches_scipy(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    units = 3000
    base = rng.uniform(0.2, 0.8, units)
    change = rng.exponential(0.02, units)
    rows = ["system,unit,context,score"]
    rows += [f"s{u % 4},u{u},base,{base[u]:.6f}" for u in range(units)]
    rows += [f"s{u % 4},u{u},formatting,{base[u] + change[u]:.6f}" for u in range(units)]
    table = tmp_path / "t.csv"
    table.write_text("\n".join(rows) + "\n")
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=1.0, certificate="quantile")
    cal = api.bbe(
        api.BBERequest(params=params, scores=table, scale=(0.0, 1.0), plot=False)
    ).result.calibrations[0]
    observed = np.sort(np.abs(np.round(base + change, 6) - np.round(base, 6)))
    d_s, d_e, d_n = 0.45 * DELTA, 0.10 * DELTA, 0.45 * DELTA  # the bound's default split
    r = next(r for r in range(1, units + 1) if stats.binom.sf(r - 1, units, 1 - d_s) <= d_e)
    b = observed[r - 1]
    row = _cert(cal, "quantile")
    assert cal.certificate == "quantile" and row["bound"] == pytest.approx(b, abs=1e-9)
    assert cal.sigma == pytest.approx((TAU - b) / _radius(units, d_n), rel=1e-6)
    assert row["delta_estimate"] == pytest.approx(d_e)


def test_default_certificate_beats_markov_on_the_bundled_examples(tmp_path: Path) -> None:
    """Done-when: feasible at (0.5, 0.01) with alpha auto, alpha_max several times Markov's."""
    arena = api.BBEParams(tau=TAU, delta=DELTA, alpha=None)
    cal = api.bbe(
        api.BBERequest(params=arena, arena_hard=ARENA, out=tmp_path / "a.json", plot=False)
    ).result.calibrations[0]
    markov = _cert(cal, "markov")["alpha_max"]
    assert cal.feasible and markov is not None and cal.alpha is not None
    assert cal.alpha / (0.5 * markov) > 3  # the released alpha vs Markov's auto alpha
    factors = REPO / "data" / "bbe" / "scores_factors.csv"
    table = api.bbe(
        api.BBERequest(params=arena, scores=factors, scale=(1, 10), out=tmp_path / "f.json", plot=False)
    )
    cal = table.result.calibrations[0]
    markov = _cert(cal, "markov")["alpha_max"]
    assert cal.feasible and cal.certificate == "range" and markov is not None and cal.alpha is not None
    assert cal.alpha / (0.5 * markov) > 3


def _imbalanced_run(run: Path) -> Path:
    """Two judges on 2000 items (70% labelled output_1): A is right on 2974 of 4000 units (0.7435)
    but says output_1 on 55%; B is right on 2687 (0.6718) and says output_1 on 95%."""
    run.mkdir(parents=True, exist_ok=True)
    (run / "manifest.json").write_text(json.dumps({"dataset": None, "stages": {}, "history": []}))
    labels = [1 if i < 1400 else 2 for i in range(2000)]
    units = [(i, o) for i in range(2000) for o in ("orig", "swap")]
    gold1 = [u for u in units if labels[u[0]] == 1]
    gold2 = [u for u in units if labels[u[0]] == 2]
    lines = []
    for judge, x1, y in (("A", 1987, 213), ("B", 2644, 1157)):
        says1 = set(gold1[:x1]) | set(gold2[:y])
        for k, (i, order) in enumerate(units):
            en = "1" if (i, order) in says1 else "2"
            zh = ("2" if en == "1" else "1") if k % 10 == 0 else en
            for cond, verdict in (("en", en), ("zh", zh)):
                rec = {"judge": judge, "item_id": f"Natural/{i}", "subset": "Natural", "kind": "pair",
                       "condition": cond, "order": order, "verdict": verdict, "winner": "A",
                       "label": labels[i], "raw": "{}"}  # fmt: skip
                lines.append(json.dumps(rec))
    (run / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    return run


def test_shared_alpha_and_neutral_centre_keep_the_raw_order(tmp_path: Path) -> None:
    run = _imbalanced_run(tmp_path / "run")
    res = _release(run, alpha=None).result
    raw = {r.system: r.raw for r in res.systems}
    assert raw["A"] == pytest.approx(0.7435) and raw["B"] == pytest.approx(0.67175)
    alphas = {c.alpha for c in res.calibrations}
    assert len(alphas) == 1 and alphas.pop() == min(c.alpha_needed or 1 for c in res.calibrations)
    assert all(c.centre == 0.5 for c in res.calibrations)
    assert res.utility is not None and res.utility.noise_free_order_kept is True
    # each judge shrunk towards its own mean: the order flips deterministically (the defect)
    own = _release(run, alpha=None, centre="mean").result
    assert own.utility is not None and own.utility.noise_free_order_kept is False


def test_understated_sensitivity_fails_holdout_verification_and_honest_passes(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.05}, items=60, accuracy=0.9)
    lie = _release(run, alpha=1.0, sensitivity=0.001, verify=2000).result.calibrations[0]
    assert lie.feasible and lie.sensitivity_source == "fixed" and 0.2 < lie.sensitivity_plugin < 0.4
    assert lie.certificate == "markov"
    v = lie.verify
    assert v is not None and v.kind == "holdout" and v.holdout is not None
    assert v.passed is False and v.ci_low > DELTA
    honest = _release(run, alpha=None, verify=2000).result.calibrations[0]
    h = honest.verify
    assert honest.sensitivity_source == "measured" and h is not None and h.kind == "holdout"
    assert honest.certificate in ("exact_ucb", "range", "quantile")  # carries over
    assert h.passed is True and h.holdout is not None and h.holdout.certificate == honest.certificate


def test_exact_release_is_checked_by_monte_carlo_and_a_wrong_sigma_fails(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.2}, items=60)
    cal = _release(run, alpha=None, certificate="exact", verify=4000).result.calibrations[0]
    v = cal.verify
    assert v is not None and v.certificate == "exact" and "Monte Carlo" in v.check
    assert v.expected_rate == pytest.approx(DELTA, rel=1e-6) and v.passed is True
    assert cal.alpha is not None and cal.sigma is not None
    changes = _changes(run, "j")
    rng = np.random.default_rng(1)
    wrong = norm_violations(
        changes, alpha=cal.alpha, sigma=1.5 * cal.sigma, tau=TAU, d=cal.d, draws=4000, rng=rng
    )
    assert stats.binomtest(wrong, 4000, DELTA, alternative="greater").pvalue < 1e-6


def test_utility_keep_probability_matches_the_formula(tmp_path: Path) -> None:
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=None)
    res = api.bbe(api.BBERequest(params=params, arena_hard=ARENA, out=tmp_path / "a.json", plot=False)).result
    cal = res.calibrations[0]
    u = res.utility
    assert u is not None and u == cal.utility and u.pairs == len(res.systems) * (len(res.systems) - 1) // 2
    assert cal.alpha is not None and cal.sigma is not None
    s, t = res.systems[0], res.systems[-1]
    sd = cal.sigma * 4 * math.sqrt(1 / s.units + 1 / t.units)  # Likert 1-5: 4 raw units per normalised
    expected = stats.norm.cdf(cal.alpha * (s.raw - t.raw) / sd)
    key = f"{s.system} vs {t.system}" if f"{s.system} vs {t.system}" in u.keep_probability else None
    key = key or f"{t.system} vs {s.system}"
    assert u.keep_probability[key] == pytest.approx(expected, rel=1e-9)
    assert u.pairs_kept_95 is not None and 0 <= u.pairs_kept_95 <= 1
    assert u.noise_free_order_kept is True and u.resolution is not None and u.resolution > 0
    for field in ("pearson_systems", "spearman_systems", "variance_reduction"):
        assert getattr(u, field) is not None


def test_bridge_releases_a_table_calibrated_on_a_run(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.15}, items=60)
    rng = np.random.default_rng(2)
    rows = ["system,unit,context,score"]
    rows += [f"m{u % 5},q{u},base,{rng.uniform(0, 10):.3f}" for u in range(500)]
    table = tmp_path / "leaderboard.csv"
    table.write_text("\n".join(rows) + "\n")
    params = api.BBEParams(tau=TAU, delta=DELTA, alpha=None, verify=1000)
    res = api.bbe(
        api.BBERequest(params=params, scores=table, scale=(0, 10), judge="j", calibrate_from=run, plot=False)
    ).result
    cal = res.calibrations[0]
    assert cal.feasible and cal.d == 500 and cal.certificate in ("exact_ucb", "range", "quantile", "markov")
    assert {r.name: r.carries_over for r in cal.certificates}[cal.certificate]
    assert res.transfer_assumption and "same judge" in res.transfer_assumption
    assert res.source["calibrated_from"]["judge"] == "j"
    assert cal.pairs == len(_changes(run, "j")) and cal.verify is not None and cal.verify.passed


def _cluster_tail_hoeffding(run: Path, judge: str, v: float, delta: float) -> tuple[float, float]:
    """Empirical share of changes > v and its per-item Hoeffding bound at level delta (computed here)."""
    table: dict[tuple[str, str, str], str | None] = {}
    for line in (run / "judgments.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["judge"] == judge and rec["kind"] == "pair":
            table[(rec["item_id"], rec["condition"], rec["order"])] = rec["verdict"]
    per_item: dict[str, list[bool]] = {}
    for (item, cond, order), verdict in table.items():
        if cond != "en" or verdict not in SCORE:
            continue
        other = "swap" if order == "orig" else "orig"
        for key in ((item, "zh", order), (item, "ls", order), (item, "en", other)):
            nb = table.get(key)
            if nb in SCORE:
                per_item.setdefault(item, []).append(abs(SCORE[nb] - SCORE[verdict]) > v)
    counts = np.array([len(x) for x in per_item.values()])
    y = np.array([sum(x) for x in per_item.values()]) / counts.mean()
    share = float(y.mean())
    return share, share + counts.max() / counts.mean() * math.sqrt(math.log(1 / delta) / (2 * len(y)))


def test_exact_on_upper_bounds_dominates_and_matches_scipy(tmp_path: Path) -> None:
    """The certificate that carries over from exact: exact on upper confidence bounds of the shares."""
    run = write_run(tmp_path / "run", judges={"j": 0.2}, items=80)
    cal = _release(run, alpha=None, verify=500).result.calibrations[0]
    assert cal.certificate == "exact_ucb" and cal.alpha is not None and cal.sigma is not None
    row = _cert(cal, "exact_ucb")
    support, shares = np.asarray(row["support"]), np.asarray(row["shares"])
    d_e = row["delta_estimate"]
    assert d_e == pytest.approx(0.1 * DELTA) and row["delta_sensitivity"] == 0
    assert shares.sum() == pytest.approx(1.0) and support[-1] == 1.0
    thresholds = [0.0, 0.5]  # verdict changes are 0, 0.5 or 1: U(> 0), U(> 0.5)
    for v in thresholds:
        upper = shares[support > v].sum()
        share, hoeffding = _cluster_tail_hoeffding(run, "j", v, d_e / len(thresholds) / 2)
        assert share <= upper + 1e-12 <= hoeffding + 1e-9, (v, share, upper, hoeffding)
    # sigma: the largest with the exact probability on the dominating distribution <= delta - d_e
    alpha = cal.alpha

    def v_of(sigma: float) -> float:
        s2 = 2 * sigma**2
        terms = [
            w
            * (
                stats.ncx2.sf(TAU**2 / s2, cal.d, (alpha * c) ** 2 / s2)
                if c > 0
                else stats.chi2.sf(TAU**2 / s2, cal.d)
            )
            for c, w in zip(support, shares, strict=True)
        ]
        return float(sum(terms))

    assert v_of(cal.sigma) == pytest.approx(DELTA - d_e, rel=1e-6)
    assert v_of(cal.sigma * 1.01) > DELTA - d_e
    assert cal.verify is not None and cal.verify.passed is True
