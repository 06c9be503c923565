"""The length artefact: how far "pick the shorter (longer) output" gets on the judged items, and the
judge's accuracy split by whether the gold output is the shorter or the longer one.

Why: on LLMBar the gold output is the shorter one in about 7 items of 10, so a judge that always picks
the shorter output is "accurate" (0.72) without reading anything, and perfectly invariant under
translation. The readiness baseline reads accuracy against the strongest of these rules
(`accuracy_over_length_baseline`), not only against chance.

Lengths are of the texts the judge was shown in that condition (the variant's, for zh or a probe):
characters, and tokens counted by `count_tokens` (offline, script-aware: a CJK ideograph or kana is a
token of its own, any other run of letters and digits one word, each other symbol one). A rule's
credit per judgment is 1 where it picks the gold output, 0 where it picks the other, 0.5 where the two
are equally long (it has to guess). Every record is over the judge's answered labelled judgments (both
orders) with an item-clustered interval (an item's two orders share its lengths, so they are one
cluster): the rules and the margin a cluster-robust (CR1) one, the split, which the readiness
baseline reads, Wilson over items; each with the item-clustered bootstrap beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgebench.analysis.cell_sums import CELL, sum_cells
from judgebench.analysis.frame import Layout, key_codes
from judgebench.analysis.stats import FloatArray, clustered_ratio, wilson
from judgebench.records import Metric
from judgebench.records.metrics import CIMethod

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+|[^\w\s]|_")
LENGTH_COLUMNS = ["item_id", "condition", "chars_1", "chars_2", "tokens_1", "tokens_2"]

# each rule: its metric, the per-judgment credit column, and how its name reads in a verdict
RULES: tuple[tuple[Metric, str, str], ...] = (
    (Metric.LENGTH_BASELINE_SHORTER_CHARS, "sc", "pick the shorter output (characters)"),
    (Metric.LENGTH_BASELINE_LONGER_CHARS, "lc", "pick the longer output (characters)"),
    (Metric.LENGTH_BASELINE_SHORTER_TOKENS, "st", "pick the shorter output (tokens)"),
    (Metric.LENGTH_BASELINE_LONGER_TOKENS, "lt", "pick the longer output (tokens)"),
)
RULE_NAMES: dict[str, str] = {str(metric): name for metric, _, name in RULES}
# the split by tokens: (metric, correct where the gold output is that side, judgments there, its items)
SPLITS: tuple[tuple[Metric, str, str, str], ...] = (
    (Metric.ACCURACY_GOLD_SHORTER, "gs_k", "gs_n", "gs_items"),
    (Metric.ACCURACY_GOLD_LONGER, "gl_k", "gl_n", "gl_items"),
)


@dataclass(frozen=True)
class Lengths:
    """What the analysis knows of the judged outputs' lengths: `outputs` (`output_lengths`: per item
    and condition, None when no text could be read) and, for a run with the length probe, each
    item's length category (probes/lengths.py: which output is the longer)."""

    outputs: pd.DataFrame | None = None
    categories: Mapping[str, str] = field(default_factory=dict)


def count_tokens(text: str) -> int:
    """Tokens of `text` in its own script: a CJK ideograph or kana each, a word of any other script,
    a punctuation mark or symbol each. Offline and deterministic (tiktoken needs its BPE files)."""
    return len(TOKEN.findall(text))


def output_lengths(texts: Iterable[tuple[str, str, str, str]]) -> pd.DataFrame:
    """Per (item id, condition, output_1, output_2) the two outputs' characters and tokens."""
    rows = [
        (item, cond, len(one), len(two), count_tokens(one), count_tokens(two))
        for item, cond, one, two in texts
    ]
    frame = pd.DataFrame(rows, columns=LENGTH_COLUMNS)
    return frame.drop_duplicates(["item_id", "condition"], keep="last").reset_index(drop=True)


def _credit(gold: np.ndarray, other: np.ndarray) -> np.ndarray:
    """A shorter-picking rule's credit: 1 gold shorter, 0.5 equal, 0 gold longer."""
    return np.where(gold < other, 1.0, np.where(gold == other, 0.5, 0.0))


def length_units(pairs: pd.DataFrame, lengths: pd.DataFrame | None) -> pd.DataFrame:
    """One row per (judge, item, condition) with lengths: each rule's credit summed over the answered
    labelled judgments (`acc_n`), the judge's correct ones and the split by tokens (what the
    bootstrap resamples; `length_records` adds the squares its intervals need). The keys keep the
    pairs' dtype (categoricals at a million judgments: as strings they were most of this table)."""
    if lengths is None or lengths.empty or pairs.empty:
        return pd.DataFrame()
    keys = ["judge", "item_id", "condition"]
    judged = pairs.loc[pairs["acc_n"] == 1, [*keys, "label", "correct"]]
    # per (judge, item, condition) first: a rule's credit is the same in both orders (the lengths and
    # the label are the item's), so it is summed as credit x judgments on a table half as long
    grouped = judged.groupby(keys, sort=False, observed=True).agg(
        acc_n=("correct", "size"), correct=("correct", "sum"), label=("label", "first")
    )
    # each unit's row of `lengths` (its (item, condition) there once: output_lengths), units without
    # one left out, the units' order kept (an inner merge's, without joining the string keys)
    index = grouped.index
    frame = pd.DataFrame({k: index.get_level_values(k).array for k in keys})
    places, wanted = key_codes(lengths, frame, ["item_id", "condition"])
    row = pd.Index(places).get_indexer(pd.Index(wanted))
    found = row >= 0
    if not found.any():
        return pd.DataFrame()
    units = frame[found].reset_index(drop=True)
    row = row[found]
    first = grouped["label"].to_numpy(dtype=float)[found] == 1.0
    sides = {}
    for unit in ("chars", "tokens"):
        one, two = (lengths[f"{unit}_{side}"].to_numpy()[row] for side in (1, 2))
        sides[unit] = (np.where(first, one, two), np.where(first, two, one))
    n = grouped["acc_n"].to_numpy(dtype=float)[found]
    correct = grouped["correct"].to_numpy(dtype=float)[found]
    gold_t, other_t = sides["tokens"]
    units["acc_n"], units["correct"] = n, correct
    units["sc"], units["st"] = _credit(*sides["chars"]) * n, _credit(gold_t, other_t) * n
    units["lc"], units["lt"] = n - units["sc"], n - units["st"]
    shorter, longer = (gold_t < other_t).astype(float), (gold_t > other_t).astype(float)
    units["gs_n"], units["gl_n"] = shorter * n, longer * n
    units["gs_k"], units["gl_k"] = shorter * correct, longer * correct
    return units


def _with_squares(units: pd.DataFrame) -> pd.DataFrame:
    """The units with the squares and cross products the item-clustered interval of each ratio
    needs (made here, for the sums only: they would double the units' table for the whole analysis)."""
    units = units.copy(deep=False)
    n = units["acc_n"]
    units["items"] = 1
    units["nn"] = n * n
    for _, col, _ in RULES:
        units[f"{col}2"], units[f"{col}v"] = units[col] ** 2, units[col] * n
        diff = units["correct"] - units[col]
        units[f"d{col}"], units[f"d{col}2"], units[f"d{col}v"] = diff, diff**2, diff * n
    for _, k, m, items in SPLITS:
        units[items] = (units[m] > 0).astype(int)
        units[f"{k}2"], units[f"{k}v"], units[f"{m}2"] = units[k] ** 2, units[k] * units[m], units[m] ** 2
    return units


def _ratio(
    agg: pd.DataFrame, metric: str, cols: tuple[str, str, str, str, str, str], confidence: float
) -> pd.DataFrame:
    """Records num / den per cell with the item-clustered (CR1) interval; `cols` are the cell sums
    of num, den, num^2, num * den, den^2 and the items (clusters)."""
    num, den, *_ = (agg[c].to_numpy(dtype=float) for c in cols)
    low, high, _ = clustered_ratio([agg[c] for c in cols[:5]], agg[cols[5]], confidence)
    out = agg[CELL].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value"] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    out["metric"], out["n"] = metric, den.astype(int)
    out["ci_low"], out["ci_high"], out["ci_method"] = low, high, CIMethod.WALD
    return out[den > 0]


def _split(agg: pd.DataFrame, metric: str, cols: tuple[str, str, str], confidence: float) -> pd.DataFrame:
    """The judge's strict accuracy on one side of the split: k / n over judgments, with the Wilson
    interval of that share over its items (PROTOCOL §4: an item's two orders are not independent, so
    the conservative count is the items'); the item-clustered bootstrap comes beside it."""
    k, n, items = (agg[c].to_numpy(dtype=float) for c in cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(n > 0, k / np.where(n > 0, n, 1.0), np.nan)
    low, high = wilson(np.nan_to_num(value) * items, items, confidence)
    out = agg[CELL].copy()
    out["value"], out["metric"], out["n"], out["k"] = value, metric, n.astype(int), k.astype(int)
    out["ci_low"], out["ci_high"], out["ci_method"] = low, high, CIMethod.WILSON
    out["n_items"] = items
    return out[n > 0]


def _margin(agg: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Strict accuracy minus the strongest rule of each cell (the first of RULES on a tie), with the
    item-clustered interval of the per-item difference."""
    n = agg["acc_n"].to_numpy(dtype=float)
    credits = np.column_stack([agg[col].to_numpy(dtype=float) for _, col, _ in RULES])
    best = np.argmax(credits, axis=1)
    rows = np.arange(len(agg))

    def pick(suffix: str) -> FloatArray:
        every = np.column_stack([agg[f"d{col}{suffix}"].to_numpy(dtype=float) for _, col, _ in RULES])
        chosen: FloatArray = every[rows, best]
        return chosen

    diff = pick("")
    sums = [diff, n, pick("2"), pick("v"), agg["nn"].to_numpy(dtype=float)]
    low, high, _ = clustered_ratio(sums, agg["items"], confidence, null=0.0, bounds=(-1.0, 1.0))
    out = agg[CELL].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value"] = np.where(n > 0, diff / np.where(n > 0, n, 1.0), np.nan)
    out["metric"], out["n"] = Metric.ACCURACY_OVER_LENGTH_BASELINE, n.astype(int)
    out["ci_low"], out["ci_high"], out["ci_method"] = low, high, CIMethod.WALD
    out["length_rule"] = np.array([str(metric) for metric, _, _ in RULES], dtype=object)[best]
    return out[n > 0]


def length_records(layout: Layout, units: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Every length record of every cell: the four rules, the split by tokens, the margin."""
    if units.empty:
        return pd.DataFrame()
    rows = _with_squares(units)
    cols = [c for c in rows.columns if c not in ("judge", "item_id", "condition")]
    agg = sum_cells(layout, rows, cols)
    del rows
    if agg.empty:
        return pd.DataFrame()
    parts = [
        _ratio(agg, metric, (col, "acc_n", f"{col}2", f"{col}v", "nn", "items"), confidence)
        for metric, col, _ in RULES
    ]
    for metric, k, m, items in SPLITS:
        parts.append(_split(agg, metric, (k, m, items), confidence))
    parts.append(_margin(agg, confidence))
    return pd.concat([p for p in parts if not p.empty], ignore_index=True)
