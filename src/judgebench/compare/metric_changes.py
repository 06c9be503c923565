"""Each declared metric in both runs side by side: the judge's value in run A, in run B, and the change.

Which metrics: those declared with `compare=True` (analysis/metric_registry.py), so a new metric is
listed here by its declaration alone. The values are each run's own analysis (subset `all`, the
unfiltered table), not the paired units the drift rows read: a run judged on more items has its
value on all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgebench.analysis.findings import ALL
from judgebench.analysis.metric_registry import specs
from judgebench.compare.compare_doc import JudgeMatch, MetricChange
from judgebench.records import MetricRecord

Key = tuple[str, str, str]  # judge, metric, condition


def _by_key(records: Iterable[MetricRecord]) -> dict[Key, MetricRecord]:
    return {(r.judge, r.metric, r.condition): r for r in records if r.subset == ALL and not r.filtered}


def metric_changes(
    records_a: Iterable[MetricRecord], records_b: Iterable[MetricRecord], matches: Sequence[JudgeMatch]
) -> list[MetricChange]:
    """One row per matched judge pair x declared compare metric x condition either run measured, in
    declaration order, conditions as run A's records list them (then B's)."""
    a, b = _by_key(records_a), _by_key(records_b)
    out = []
    for match in matches:
        for spec in (s for s in specs() if s.compare):
            conditions = dict.fromkeys(
                [c for (j, m, c) in a if j == match.judge_a and m == spec.name]
                + [c for (j, m, c) in b if j == match.judge_b and m == spec.name]
            )
            for condition in conditions:
                ra, rb = (
                    a.get((match.judge_a, spec.name, condition)),
                    b.get((match.judge_b, spec.name, condition)),
                )
                va, vb = (ra.value if ra else None), (rb.value if rb else None)
                out.append(
                    MetricChange(
                        judge_a=match.judge_a,
                        judge_b=match.judge_b,
                        metric=spec.name,
                        condition=condition,
                        value_a=va,
                        value_b=vb,
                        n_a=ra.n if ra else None,
                        n_b=rb.n if rb else None,
                        change=None if va is None or vb is None else vb - va,
                    )
                )
    return out
