"""What compare's metric table costs: each run's own analysis (no bootstrap) against the drift rows.

Two runs of one judge over 5 x PER_SUBSET items in en, zh and ls (the report tests' synthetic
judgments, two seeds), timed three times; prints seconds for the pairing + drift rows and for the
two runs' analyses the metric table reads. Usage: python scripts/bench_compare_metrics.py [PER_SUBSET]
(run from the repository root with PYTHONPATH=src:.)
"""

from __future__ import annotations

import sys
import time

from tests.report.conftest import make_judgments

from judgebench.api.compare import metric_records
from judgebench.compare.drift import drift_rows
from judgebench.compare.pairing import Side, match_judges, pair_runs
from judgebench.store.judgment_table import judgment_table


def _side(per_subset: int, seed: int) -> Side:
    judgments = make_judgments(("judge",), ("en", "zh", "ls"), per_subset=per_subset, seed=seed)
    return Side(judgment_table(judgments).frame, f"seed {seed}")


def main(per_subset: int) -> None:
    a, b = _side(per_subset, 1), _side(per_subset, 2)
    order = ["en", "zh", "ls"]
    for _ in range(3):
        start = time.perf_counter()
        matches = match_judges(a, b)
        units, _ = pair_runs(a, b, matches)
        drift_rows(units, order, 0.95)
        drift = time.perf_counter() - start
        start = time.perf_counter()
        for side, judge in ((a, matches[0].judge_a), (b, matches[0].judge_b)):
            metric_records(side, [judge], order, 0.95)
        metrics = time.perf_counter() - start
        print(f"{len(a.frame):,} judgments a run: drift {drift:.2f} s, both analyses {metrics:.2f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
