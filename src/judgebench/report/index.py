"""Metric records keyed for lookup, with the orders the report shows judges, conditions and subsets in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgebench.analysis.findings import ALL, MEAN_JUDGE, is_comparison
from judgebench.analysis.subsets import subset_sort_key
from judgebench.records import ConditionPair, MetricRecord


class MetricIndex:
    """Records keyed by (judge, metric, condition, subset, filtered), with the orders to show them in."""

    def __init__(self, records: Iterable[MetricRecord], judge_order: Sequence[str] = ()) -> None:
        self.records = list(records)
        self._by: dict[tuple[str, str, str, str, bool], MetricRecord] = {}
        for record in self.records:
            self._by[(record.judge, record.metric, record.condition, record.subset, record.filtered)] = record
        seen = list(dict.fromkeys([*judge_order, *(r.judge for r in self.records)]))
        self.judges = [j for j in seen if j != MEAN_JUDGE and not is_comparison(j)]
        self.comparisons = [j for j in seen if is_comparison(j)]
        self.has_mean = any(r.judge == MEAN_JUDGE for r in self.records)

    def get(
        self, judge: str, metric: str, condition: str, subset: str = ALL, filtered: bool = False
    ) -> MetricRecord | None:
        return self._by.get((judge, metric, condition, subset, filtered))

    def has(self, metric: str) -> bool:
        return any(r.metric == metric for r in self.records)

    def conditions(self, metric: str, order: Sequence[str] = ()) -> list[str]:
        """Conditions a metric was measured in, in the run's condition order."""
        found = list(dict.fromkeys(r.condition for r in self.records if r.metric == metric))
        rank = {c: i for i, c in enumerate(order)}
        return sorted(found, key=lambda c: (rank.get(c, len(rank)), found.index(c)))

    def pairs(self, metric: str, order: Sequence[str]) -> list[str]:
        """Condition pairs `a->b` of a flip-like metric: en->x first, in the run's condition order."""
        found = list(dict.fromkeys(r.condition for r in self.records if r.metric == metric))
        rank = {c: i for i, c in enumerate(order)}

        def key(pair: str) -> tuple[int, int, int]:
            left, right = ConditionPair.parse(pair) or (pair, "")
            return (rank.get(left, len(rank)), rank.get(right, len(rank)), found.index(pair))

        return sorted(found, key=key)

    def subsets(self, metric: str, hint: Sequence[str] = ()) -> list[str]:
        found = set(r.subset for r in self.records if r.metric == metric) | (set(hint) & self._subsets())
        return sorted(found, key=subset_sort_key)

    def _subsets(self) -> set[str]:
        return {r.subset for r in self.records}

    def rows_judges(self) -> list[str]:
        """Judges first, then the unweighted mean over judges when there is more than one judge."""
        return [*self.judges, MEAN_JUDGE] if self.has_mean and len(self.judges) > 1 else list(self.judges)
