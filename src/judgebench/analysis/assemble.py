"""The record table's last steps: the mean over judges, a stable reading order, and records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from judgebench.analysis.findings import MEAN_JUDGE, VS
from judgebench.analysis.frame import Layout, pair_names
from judgebench.records import MetricRecord
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.records.metrics import CORE_FIELDS, CIMethod

COUNTS = ("n", "b", "c", "k", "n_items")


def mean_over_judges(table: pd.DataFrame) -> pd.DataFrame:
    """Unweighted mean over judges of every per-judge metric; n = judges with a value; no interval.
    A judge's cell with no unit (n = 0, e.g. McNemar with no valid pair) has no value to average."""
    base = table[~table["judge"].str.contains(VS, regex=False) & table["value"].notna() & (table["n"] > 0)]
    if base.empty:
        return pd.DataFrame()
    keys = ["metric", "condition", "subset", "filtered"]
    agg = base.groupby(keys, sort=False)["value"].agg(["mean", "count"]).reset_index()
    return pd.DataFrame(
        {
            "judge": MEAN_JUDGE,
            "metric": agg["metric"],
            "condition": agg["condition"],
            "subset": agg["subset"],
            "filtered": agg["filtered"],
            "value": agg["mean"],
            "n": agg["count"].astype(int),
            "ci_method": CIMethod.MEAN_OVER_JUDGES,
        }
    )


def order_table(
    table: pd.DataFrame,
    layout: Layout,
    conditions: Sequence[str],
    judges: Sequence[str],
    probes: Mapping[str, ProbeOrigin] | None = None,
) -> pd.DataFrame:
    """Stable, readable order: filtered, subset, judge (mean last), metric family, condition."""
    judge_rank = {j: i for i, j in enumerate([*judges, MEAN_JUDGE])}
    subset_rank = {s: i for i, s in enumerate(layout.groups)}
    cond_rank = {c: i for i, c in enumerate([*conditions, *pair_names(conditions, probes)])}
    big = len(judge_rank) + len(cond_rank) + 1
    key = pd.DataFrame(
        {
            "f": table["filtered"].astype(bool).astype(int),
            "s": table["subset"].map(subset_rank).fillna(big),
            "j": table["judge"].map(judge_rank).fillna(big),
            "c": table["condition"].map(cond_rank).fillna(big),
            "m": table["metric"],
            "jj": table["judge"],
        }
    )
    order = key.sort_values(["f", "s", "j", "jj", "m", "c"], kind="stable").index
    return table.loc[order].reset_index(drop=True)


def to_records(table: pd.DataFrame) -> list[MetricRecord]:
    """Rows to records: NaN becomes null; an optional field is only set where it applies."""
    table = record_columns(table)
    # a column at a time as Python values (NaN and NA as None), not `to_dict("records")`, which boxes
    # every cell on its own: at 23 languages (48,640 records) that was 1.1 s of the analysis
    extras = [c for c in table.columns if c not in CORE_FIELDS]
    core = list(zip(*(_python_values(table[c]) for c in CORE_FIELDS), strict=True))
    optional = [_python_values(table[c]) for c in extras]
    out = []
    for at, values in enumerate(core):
        data = dict(zip(CORE_FIELDS, values, strict=True))
        for name, column in zip(extras, optional, strict=True):
            if column[at] is not None:
                data[name] = column[at]
        out.append(MetricRecord.model_validate(data))
    return out


def record_columns(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of the record table with every core field, its counts as nullable ints (b, c and k
    exist on some records only), n 0 where missing and `filtered` a bool: what a record is read from."""
    table = table.copy()
    for col in CORE_FIELDS:
        if col not in table.columns:
            table[col] = None
    for col in COUNTS:
        if col in table.columns:
            table[col] = table[col].astype("Int64")
    table["n"] = table["n"].fillna(0)
    table["filtered"] = table["filtered"].astype(bool)
    return table


def _python_values(column: pd.Series) -> list[object]:
    """The column's values as Python objects (numbers as int, float and bool), missing ones None."""
    return column.astype(object).where(column.notna(), None).tolist()  # type: ignore[no-any-return]
