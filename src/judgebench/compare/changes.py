"""The units whose verdict changed between the runs, as records for review: the item, condition and
order, both verdicts and the gold label, the raw answers, and where each run's report.html explorer
shows the item (`report.html#explorer?open=ITEM&oj=JUDGE`, the explorer's own address format)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import pandas as pd

from judgebench.compare.compare_doc import ChangedUnit
from judgebench.records import Judgment


def changed_mask(units: pd.DataFrame) -> pd.Series:
    """Units with a verdict in both runs that differ (the rows the flip rate counts)."""
    present = units["outcome_a"].notna() & units["outcome_b"].notna()
    return present & (units["outcome_a"].astype(str) != units["outcome_b"].astype(str))


def explorer_link(report: str | None, item_id: str, judge: str) -> str | None:
    """The explorer's address of one item x judge row in a run's report.html (None: no report)."""
    if report is None:
        return None
    return f"{report}#explorer?open={quote(item_id, safe='')}&oj={quote(judge, safe='')}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _correct(verdict: object, gold: int | None) -> bool | None:
    if gold is None or not isinstance(verdict, str):
        return None
    return verdict == str(gold)


def changed_units(
    units: pd.DataFrame,
    records_a: Mapping[int, Judgment],
    records_b: Mapping[int, Judgment],
    report_a: str | None = None,
    report_b: str | None = None,
) -> list[ChangedUnit]:
    """One record per changed unit, in the paired frame's order (judge pair, item, kind, condition,
    order); `records_*` are the whole judgments at the units' lines (for the raw answers)."""
    rows: list[dict[Any, Any]] = units[changed_mask(units)].to_dict("records")
    out = []
    for r in rows:
        label = r["label"]
        known = label is not None and not (isinstance(label, float) and math.isnan(label))
        gold = int(label) if known and r["kind"] == "pair" else None
        ja, jb = records_a.get(int(r["line_a"])), records_b.get(int(r["line_b"]))
        item, judge_a, judge_b = str(r["item_id"]), str(r["judge_a"]), str(r["judge_b"])
        out.append(
            ChangedUnit(
                item_id=item,
                subset=str(r["subset"]),
                judge_a=judge_a,
                judge_b=judge_b,
                kind=str(r["kind"]),
                condition=str(r["condition"]),
                order=str(r["order"]),
                verdict_a=_text(r["outcome_a"]),
                verdict_b=_text(r["outcome_b"]),
                winner_a=_text(r["winner_a"]),
                winner_b=_text(r["winner_b"]),
                gold=gold,
                correct_a=_correct(r["outcome_a"], gold),
                correct_b=_correct(r["outcome_b"], gold),
                raw_a=ja.raw if ja else None,
                raw_b=jb.raw if jb else None,
                explorer_a=explorer_link(report_a, item, judge_a),
                explorer_b=explorer_link(report_b, item, judge_b),
            )
        )
    return out
