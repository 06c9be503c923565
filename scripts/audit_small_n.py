"""Re-measure issue 40's small-n conclusions with seeded simulations, through the project's own code:

1. readiness: clean judges (never a flip) whose target has 5 items (en on 100): how many PASS (must be
   0), and clean judges on 100 target items, which should still pass;
2. probes: judges whose every probe sits exactly at the flip-rate limit (15%, flips clustered by item:
   some items flip in both orders): the share of judges with at least one flag (family-wise false flag
   rate, target <= 5%), and of rows flagged; the rows are decided by `analysis.probes.probe_rows`,
   their records built with the same functions the report uses (`bootstrap.cluster_bootstrap`,
   `small_n`), because the whole analysis of hundreds of probe judges takes minutes;
3. self-preference: null rows (scores 0 / 0.5 / 1, no preference): flag rate, and rows whose flag
   disagrees with their printed p (must be 0);
4. PPI: coverage of the reported 95% interval (`human.estimates.estimate_of`: Wilson below 40 labels,
   cross-fitted PPI++ from there) at 10, 21 and 84 labels (target >= 0.92), two scenarios.

Usage (the default run takes about two minutes on one core):

    python scripts/audit_small_n.py [--seed 0] [--readiness-judges 20] [--probe-judges 400]
        [--probes 6] [--probe-items 200] [--sp-rows 300] [--ppi-reps 1000] [--labels 10,21,84]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.bootstrap import cluster_bootstrap
from judgebench.analysis.findings import ALL, pair_name
from judgebench.analysis.probes import probe_rows
from judgebench.analysis.self_preference_test import _row as self_preference_row
from judgebench.analysis.small_n import union, wilson_items
from judgebench.human.estimates import _Sample, estimate_of
from judgebench.records import Judgment, Metric, MetricRecord
from judgebench.records.condition_specs import ProbeOrigin

WINNER = {("orig", "1"): "A", ("orig", "2"): "B", ("swap", "1"): "B", ("swap", "2"): "A"}


def _pair(judge: str, item: int, condition: str, order: str, verdict: str) -> Judgment:
    return Judgment(
        judge=judge, item_id=f"Natural/{item}", subset="Natural", kind="pair", condition=condition,
        order=order, raw="answer", winner=WINNER[(order, verdict)], verdict=verdict, label=1,  # type: ignore[arg-type]
    )  # fmt: skip


def readiness(judges: int, target_items: int, en_items: int, seed: int) -> dict[str, int]:
    """Clean judges: always right in en and never a flip; the target judged on `target_items` items."""
    js = []
    for j in range(judges):
        for i in range(en_items):
            for order in ("orig", "swap"):
                js.append(_pair(f"j{j}", i, "en", order, "1"))
                if i < target_items:
                    js.append(_pair(f"j{j}", i, "zh", order, "1"))
    verdicts = analyze(js, settings=ReportSettings(seed=seed)).readiness
    return {s: sum(v.status == s for v in verdicts) for s in ("pass", "inconclusive", "fail")}


def _probe_flips(rng: np.random.Generator, items: int, rate: float) -> np.ndarray:
    """Per item, flips out of its two orders with mean `rate` per pair, clustered by item: two thirds
    of the flipped pairs come from items that flip in both orders."""
    u = rng.random(items)
    both, one = rate * 2 / 3, rate * 2 / 3  # both * 2 + one = 2 * rate pairs per item
    return np.where(u < both, 2.0, np.where(u < both + one, 1.0, 0.0))


def probes(
    judges: int, n_probes: int, items: int, seed: int, settings: ReportSettings
) -> tuple[float, float, float]:
    """(share of judges with any flag, share of rows flagged, share of judges with any row whose
    interval alone lies above the limit: the flag without Holm), every probe exactly at the limit."""
    rng = np.random.default_rng(seed)
    names = [f"probe{k}" for k in range(n_probes)]
    origins = {p: ProbeOrigin(p, "en") for p in names}
    records: list[MetricRecord] = []
    den = np.full((items, 1), 2.0)
    for j in range(judges):
        for k, probe in enumerate(names):
            num = _probe_flips(rng, items, settings.max_flip_rate)[:, None]
            value = float(num.sum() / den.sum())
            boot = cluster_bootstrap(num, den, samples=settings.bootstrap_samples, seed=seed,
                                     stream=f"{j}|{k}", confidence=settings.confidence)  # fmt: skip
            low, high = union(boot, wilson_items(value, items, settings.confidence))
            records.append(
                MetricRecord(
                    judge=f"j{j}",
                    metric=Metric.FLIP_RATE,
                    condition=pair_name("en", probe),
                    subset=ALL,
                    filtered=False,
                    value=value,
                    n=2 * items,
                    k=int(num.sum()),
                    boot_low=float(boot[0][0]),
                    boot_high=float(boot[1][0]),
                    n_items=items,
                    item_low=float(low[0]),
                    item_high=float(high[0]),
                )
            )
    rows = probe_rows(records, origins, settings)
    flagged = {r.judge for r in rows if r.status == "flagged"}
    above = {r.judge for r in rows if r.ci_low is not None and r.ci_low > r.limit}
    return len(flagged) / judges, sum(r.status == "flagged" for r in rows) / len(rows), len(above) / judges


def self_preference(rows: int, seed: int) -> tuple[float, int]:
    """(flag rate, rows whose flag disagrees with p < level) over null rows of 16 items."""
    rng = np.random.default_rng(seed)
    flags = disagree = 0
    for r in range(rows):
        items = [f"i{k}" for k in range(16)]
        sides = {item: "1" if k % 2 else "2" for k, item in enumerate(items)}
        labels = [1 + (k // 2) % 2 for k in range(16)]  # own answer gold in half the items
        calls = []
        for item, label in zip(items, labels, strict=True):
            for order in ("orig", "swap"):
                verdict = rng.choice(["1", "2", "tie"], p=[0.45, 0.45, 0.1])  # indifferent to authorship
                calls.append({"item_id": item, "verdict": verdict, "label": label, "order": order})
        row = self_preference_row(pd.DataFrame(calls), "j", "fam", "en", sides, confidence=0.95,
                                  permutations=1000, seed=seed + r)  # fmt: skip
        flags += row.flagged
        p_says = row.p_value is not None and row.p_value < 0.05 and (row.excess or 0.0) > 0
        disagree += row.flagged != p_says or (row.low is not None and (row.low > 0) != p_says)
    return flags / rows, disagree


def ppi(n: int, reps: int, p1: float, accuracy: float, seed: int) -> tuple[float, dict[str, int]]:
    """Coverage of the reported 95% interval of a win rate with n labels and 500 judge-only items."""
    rng = np.random.default_rng(seed)
    scores = np.array([0.0, 0.5, 1.0])
    theta = p1 + 0.05 * 0.5
    covered, methods = 0, {"ppi++": 0, "classical": 0, "unanimous": 0}

    def draw(m: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.choice(scores, size=m, p=[1 - p1 - 0.05, 0.05, p1])
        return y, np.where(rng.random(m) < accuracy, y, rng.choice(scores, size=m))

    for _ in range(reps):
        y, f = draw(n)
        _, fu = draw(500)
        e = estimate_of(_Sample(y.tolist(), f.tolist(), fu.tolist()), ("j", "en", "win_rate", None), 0.95)
        assert e is not None
        covered += e.ppi.ci_low <= theta <= e.ppi.ci_high
        methods[e.method] += 1
    return covered / reps, methods


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--readiness-judges", type=int, default=20)
    ap.add_argument("--probe-judges", type=int, default=400)
    ap.add_argument("--probes", type=int, default=6, help="probe rows per judge")
    ap.add_argument("--probe-items", type=int, default=200)
    ap.add_argument("--sp-rows", type=int, default=300)
    ap.add_argument("--ppi-reps", type=int, default=1000)
    ap.add_argument("--labels", default="10,21,84")
    args = ap.parse_args()
    start = time.perf_counter()
    load = os.getloadavg()[0]

    small = readiness(args.readiness_judges, 5, 100, args.seed)
    large = readiness(args.readiness_judges, 100, 100, args.seed)
    print(
        f"readiness, clean judge, 5-item target (en on 100 items), {args.readiness_judges} judges: "
        f"{small['pass']} pass, {small['inconclusive']} inconclusive, {small['fail']} fail (target: 0 pass)"
    )
    print(f"readiness, clean judge, 100-item target: {large['pass']} of {args.readiness_judges} pass")

    settings = ReportSettings(seed=args.seed)
    fwer, row_rate, unadjusted = probes(args.probe_judges, args.probes, args.probe_items, args.seed, settings)
    print(
        f"probes, {args.probes} per judge all exactly at the limit {settings.max_flip_rate:.0%} "
        f"({args.probe_items} items, {args.probe_judges} judges): judges with any flag {fwer:.3f} "
        f"(target <= 0.05), rows flagged {row_rate:.4f}; by the interval alone, without Holm: "
        f"judges {unadjusted:.3f}"
    )

    sp_rate, disagree = self_preference(args.sp_rows, args.seed)
    print(
        f"self-preference, {args.sp_rows} null rows of 16 items: flagged {sp_rate:.3f} (one-sided, level "
        f"0.05), flag disagreeing with p < 0.05: {disagree}"
    )

    for p1, accuracy in ((0.8, 0.8), (0.55, 0.8)):
        for n in (int(x) for x in args.labels.split(",")):
            cover, methods = ppi(n, args.ppi_reps, p1, accuracy, args.seed + n)
            used = ", ".join(f"{k} {v}" for k, v in methods.items() if v)
            print(
                f"PPI, win rate {p1 + 0.025:.3f}, judge accuracy {accuracy:.0%}, {n} labels + 500 others, "
                f"{args.ppi_reps} reps: 95% coverage {cover:.3f} (target >= 0.92; {used})"
            )
    print(
        f"seed {args.seed}; {time.perf_counter() - start:.0f} s wall, {time.process_time():.0f} s CPU; "
        f"load average {load:.2f} at start; "
        f"cores {os.cpu_count()}"
    )


if __name__ == "__main__":
    main()
