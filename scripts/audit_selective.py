"""Audit the guarantee of `judgebench selective` by simulation: calibrate many times on fresh labelled
slices, judge fresh items each time, and count how often the decided items disagree with the humans
more than alpha (the realised failure rate, to be <= delta up to its Monte-Carlo error) and how much
the judges keep (the coverage).

Scenarios (planted judges of judgebench.selective.simulate; confidence c ~ U(0, 1)):
  informative   one judge, 25% disagreement overall, concentrated at low confidence
  noise         one judge, 25% disagreement whatever its confidence (should keep almost nothing)
  cascade       a cheap judge (35%) then a stronger one (20%), delta split over the two stages
  cascade-paper the same cascade with each stage at delta, as in the paper (holds at 1 - 2 delta)
  point         the informative judge calibrated on the point estimate (the bound's level at 1/2):
                the contrast that shows the audit can fail

Seeds: scenario i (in the order above) uses seed --seed + i; the same arguments give the same figures.

    python scripts/audit_selective.py [--calibrations 500] [--labelled 500] [--fresh 20000]
        [--alpha 0.15] [--delta 0.1] [--min-kept 30] [--seed 0] [--json FILE]

Exit 1 when a scenario that claims the guarantee fails more often than delta + 3 Monte-Carlo errors.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judgebench.selective import Design, SimJudge, simulate


@dataclass(frozen=True)
class Scenario:
    name: str
    judges: tuple[SimJudge, ...]
    stage_delta: float  # the delta each stage is calibrated at, as a share of --delta
    claims: float  # the failure probability the calibration claims, as a share of --delta (0: none)


SCENARIOS = (
    Scenario("informative", (SimJudge(0.25),), 1.0, 1.0),
    Scenario("noise", (SimJudge(0.25, informative=False),), 1.0, 1.0),
    Scenario("cascade", (SimJudge(0.35), SimJudge(0.2)), 0.5, 1.0),
    Scenario("cascade-paper", (SimJudge(0.35), SimJudge(0.2)), 1.0, 2.0),
    Scenario("point", (SimJudge(0.25),), 0.0, 0.0),
)


def run_scenario(scenario: Scenario, args: argparse.Namespace, seed: int) -> dict[str, object]:
    design = Design(labelled=args.labelled, fresh=args.fresh, calibrations=args.calibrations, seed=seed)
    delta = scenario.stage_delta * args.delta if scenario.stage_delta else 0.5
    t0 = time.perf_counter()
    result = simulate(scenario.judges, design, alpha=args.alpha, delta=delta, min_kept=args.min_kept)
    rate = float(result.failed.mean())
    claimed = scenario.claims * args.delta
    mc = math.sqrt(max(claimed, 1e-12) * (1 - claimed) / args.calibrations) if claimed else 0.0
    row: dict[str, object] = {
        "scenario": scenario.name,
        "seed": seed,
        "stage_delta": delta,
        "claimed_failure": claimed if claimed else None,
        "failure_rate": rate,
        "mc_error": mc,
        "within": bool(rate <= claimed + 3 * mc) if claimed else None,
        "coverage_mean": float(result.coverage.mean()),
        "coverage_q10_q50_q90": [float(q) for q in np.quantile(result.coverage, [0.1, 0.5, 0.9])],
        "agreement_mean": float(1 - np.nanmean(result.disagreement))
        if np.isfinite(result.disagreement).any()
        else None,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if len(scenario.judges) == 1:  # the true risk at each threshold, free of the fresh sample's noise
        risk = np.nan_to_num(scenario.judges[0].risk(result.thresholds[:, 0]), nan=0.0)
        row["true_risk_failure_rate"] = float((risk > args.alpha).mean())
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calibrations", type=int, default=500, help="calibrations per scenario (default 500)")
    ap.add_argument("--labelled", type=int, default=500, help="labelled items per calibration (default 500)")
    ap.add_argument("--fresh", type=int, default=20_000, help="fresh items per calibration (default 20000)")
    ap.add_argument("--alpha", type=float, default=0.15)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--min-kept", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0, help="scenario i uses seed + i (default 0)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    rows = [run_scenario(s, args, args.seed + i) for i, s in enumerate(SCENARIOS)]
    print(
        f"{args.calibrations} calibrations x {args.labelled} labelled, {args.fresh} fresh items each; "
        f"alpha {args.alpha}, delta {args.delta}, min kept {args.min_kept}"
    )
    head = f"{'scenario':<14}{'claimed':>8}{'failed':>8}{'+-MC':>7}{'true-risk':>10}"
    print(f"{head}{'coverage':>9}{'agree':>7}  ok")
    for r in rows:
        claimed = "-" if r["claimed_failure"] is None else f"{r['claimed_failure']:.3f}"
        true = r.get("true_risk_failure_rate")
        agree = r["agreement_mean"]
        print(
            f"{r['scenario']:<14}{claimed:>8}{r['failure_rate']:>8.3f}{r['mc_error']:>7.3f}"
            f"{'-' if true is None else f'{true:.3f}':>10}{r['coverage_mean']:>9.3f}"
            f"{'-' if agree is None else f'{agree:.3f}':>7}  {'-' if r['within'] is None else r['within']}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["within"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
