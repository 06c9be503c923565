"""Time the leaderboard-comparable scores (analysis/rewardbench_score.py) on a full-size M-RewardBench run:
one judge, 2,869 items (the filtered counts, math-prm's 447) in en + 23 languages, both orders, with the
report's default 1,000 bootstrap resamples. Usage:

    python scripts/bench_leaderboard.py [--judges 1] [--samples 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judgebench.analysis import ReportSettings
from judgebench.analysis.frame import judgment_frame
from judgebench.analysis.rewardbench_score import leaderboard_records
from judgebench.api.leaderboard import leaderboard_weights
from judgebench.records import Judgment

REAL_SIZES = {"math-prm": 447}  # the other subsets hold their M-RewardBench count


def synthetic(judges: int) -> tuple[list[Judgment], list[str]]:
    weights = leaderboard_weights("m-rewardbench")
    assert weights is not None
    section = {leaf: s for s, leaves in weights.sections.items() for leaf in leaves}
    items = [
        f"{section[leaf]}/{leaf}/{k}"
        for leaf in weights.counts
        for k in range(REAL_SIZES.get(leaf, weights.counts[leaf]))
    ]
    conditions = ["en", *(f"c{i}" for i in range(23))]
    rng = np.random.default_rng(0)
    out = []
    for j in range(judges):
        for condition in conditions:
            for item in items:
                for order in ("orig", "swap"):
                    verdict = "1" if rng.random() < 0.8 else "2"
                    out.append(
                        Judgment(
                            judge=f"judge{j}",
                            item_id=item,
                            subset=item.rsplit("/", 1)[0],
                            kind="pair",
                            condition=condition,
                            order=order,
                            verdict=verdict,
                            winner="A",
                            label=1,
                        )
                    )
    return out, conditions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--judges", type=int, default=1)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    judgments, conditions = synthetic(args.judges)
    df = judgment_frame(judgments)
    weights = leaderboard_weights("m-rewardbench")
    assert weights is not None
    start = time.perf_counter()
    records = leaderboard_records(df, weights, ReportSettings(bootstrap_samples=args.samples), conditions)
    seconds = time.perf_counter() - start
    print(f"{len(judgments):,} judgments, {len(records)} records, {seconds:.2f} s")


if __name__ == "__main__":
    main()
