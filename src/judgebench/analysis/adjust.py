"""Multiple testing and power: Benjamini-Hochberg within each p-value family, and the minimum
detectable effect (MDE) of every test that found nothing, flagged `underpowered` above the user's
threshold. A cell with no unit (n = 0) tests nothing: it joins no family and gets no MDE.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgebench.analysis import stats
from judgebench.analysis.findings import ReportSettings
from judgebench.records import Metric

FAMILY = ["p_family", "subset", "filtered"]


def _bh_within_families(table: pd.DataFrame) -> None:
    # a cell with no pairs (p = 1 by definition) tests nothing and does not widen its family
    tested = table["p"].notna() & (table["n"] > 0)
    table["p_adj"] = np.nan
    fam = table.loc[tested, FAMILY]
    for _, idx in fam.groupby(FAMILY, sort=False).groups.items():
        table.loc[idx, "p_adj"] = stats.bh_adjust(table.loc[idx, "p"].tolist())


def _power(table: pd.DataFrame, settings: ReportSettings, alpha: float) -> None:
    pvals = table["p"].to_numpy(dtype=float)
    metrics = table["metric"].to_numpy()
    ns = table["n"].to_numpy(dtype=int)
    discordant = (
        table["b"].fillna(0).to_numpy(dtype=int) + table["c"].fillna(0).to_numpy(dtype=int)
        if "b" in table.columns
        else np.zeros(len(table), dtype=int)
    )
    mde = np.full(len(table), np.nan)
    under: list[bool | None] = [None] * len(table)
    for i in np.flatnonzero(~np.isnan(pvals) & (ns > 0)):  # a cell with no pair tests nothing
        if pvals[i] < alpha:
            under[i] = False
            continue
        if metrics[i] == Metric.TIE_PROBE_EN_SHARE:
            m = stats.mde_binomial_half(int(ns[i]), alpha=alpha, power=settings.power)
        else:
            m = stats.mde_mcnemar(int(ns[i]), int(discordant[i]), alpha=alpha, power=settings.power)
        mde[i] = math.nan if m is None else m
        under[i] = m is None or m > settings.min_detectable_effect
    table["mde"] = mde
    table["underpowered"] = under


def adjust_and_power(table: pd.DataFrame, settings: ReportSettings) -> pd.DataFrame:
    """Benjamini-Hochberg within each family (per subset and table) and the MDE of null results."""
    if "p" not in table.columns:
        return table
    alpha = 1.0 - settings.confidence
    _bh_within_families(table)
    _power(table, settings, alpha)
    adjusted = table["p_adj"].to_numpy(dtype=float)
    table["significant"] = [None if math.isnan(q) else bool(q < alpha) for q in adjusted]
    return table
