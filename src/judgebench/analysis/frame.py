"""The input table: one row per call key, the subset layout of its items, the order of its conditions.

Every metric family starts from `judgment_frame` and expands its per-unit rows over the subset groups
and the two tables (all items, audit-filtered) with `Layout.expand`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgebench.analysis.findings import SOURCE
from judgebench.analysis.subsets import subset_groups, subset_sort_key, unique
from judgebench.records import ConditionPair, Judgment
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.records.judgments import ANALYSIS_COLUMNS, CallKey

COLUMNS = list(ANALYSIS_COLUMNS)
CALL_KEY = list(CallKey._fields)


def judgment_frame(judgments: Iterable[Judgment]) -> pd.DataFrame:
    """One row per call key (the last judgment wins), verdicts normalised to lower-case strings."""
    return rows_frame(
        (
            j.judge,
            j.item_id,
            j.subset,
            j.kind,
            j.condition,
            j.order,
            j.verdict,
            j.winner,
            j.label,
            j.confidence,
            j.usage.input_tokens if j.usage else None,
            j.usage.output_tokens if j.usage else None,
            j.cost_usd,
        )
        for j in judgments
    )


def rows_frame(rows: Iterable[tuple[Any, ...]]) -> pd.DataFrame:
    """The frame of judgments given as COLUMNS-ordered tuples of their values as written: one row
    per call key (the last wins), the verdict stripped and lower-cased, a missing number NaN (no
    tokens 0). The one normalisation of every judgment frame, whatever the records were read as."""
    out = [
        (
            *row[:6],
            None if row[6] is None else row[6].strip().lower(),
            row[7],
            math.nan if row[8] is None else float(row[8]),
            math.nan if row[9] is None else float(row[9]),
            row[10] or 0,
            row[11] or 0,
            math.nan if row[12] is None else row[12],
        )
        for row in rows
    ]
    df = pd.DataFrame(out, columns=COLUMNS)
    df = df.drop_duplicates(CALL_KEY, keep="last")
    return df.reset_index(drop=True)


KeyCodes = np.ndarray[Any, np.dtype[np.int64]]


def key_codes(left: pd.DataFrame, right: pd.DataFrame, keys: Sequence[str]) -> tuple[KeyCodes, KeyCodes]:
    """Each row's `keys` of both tables as one integer, equal exactly where the key tuples are equal
    (an anti-join or membership test of a million rows by `np.isin`, not by merging strings). Key by
    key, the tuple so far is numbered densely again, so that no number of distinct keys overflows."""
    a = np.zeros(len(left), dtype=np.int64)
    b = np.zeros(len(right), dtype=np.int64)
    for key in keys:
        codes, uniques = pd.factorize(left[key])
        vocabulary = pd.Index(np.asarray(uniques, dtype=object))
        a = a * (len(vocabulary) + 1) + codes + 1
        b = b * (len(vocabulary) + 1) + index_positions(vocabulary, right[key]) + 1  # absent: 0
        dense, _ = pd.factorize(np.concatenate([a, b]))
        a, b = dense[: len(a)].astype(np.int64), dense[len(a) :].astype(np.int64)
    return a, b


def index_positions(index: pd.Index, values: pd.Series) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The position in `index` of each of `values` (-1 where absent): through the categories when
    `values` is categorical, a few thousand lookups rather than a million."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        at = index.get_indexer(pd.Index(np.asarray(values.cat.categories, dtype=object)))
        codes = values.cat.codes.to_numpy()
        return np.where(codes >= 0, at[codes], -1).astype(np.int64)
    return index.get_indexer(pd.Index(values.to_numpy(dtype=object))).astype(np.int64)


class Layout:
    """Which subset groups each item belongs to and which items the filtered tables drop.

    Besides the names, integer codes for the vectorised sums (`cells.sum_cells`): each item's leaf
    (`item_leaf`, aligned with `items`), whether it is flagged, and which leaves each group holds."""

    def __init__(self, df: pd.DataFrame, flagged: set[str]) -> None:
        items = df.drop_duplicates("item_id")[["item_id", "subset"]]
        self.leaves = sorted(unique(items["subset"].tolist()), key=subset_sort_key)
        self.groups = subset_groups(self.leaves)
        self.items: list[str] = items["item_id"].tolist()
        self.item_subset = dict(zip(items["item_id"], items["subset"], strict=True))
        self.flagged = flagged
        self.membership = pd.DataFrame(
            [(leaf, g) for g, leaves in self.groups.items() for leaf in leaves], columns=["leaf", "group"]
        )
        self.item_index = pd.Index(self.items)
        leaf_no = {leaf: i for i, leaf in enumerate(self.leaves)}
        self.item_leaf = np.array([leaf_no[s] for s in items["subset"].tolist()], dtype=np.int64)
        self.item_flagged = np.array([i in flagged for i in self.items], dtype=bool)
        self.group_leaves = np.array(
            [[leaf in set(members) for leaf in self.leaves] for members in self.groups.values()], dtype=bool
        ).reshape(len(self.groups), len(self.leaves))

    def expand(self, df: pd.DataFrame) -> pd.DataFrame:
        """Repeat each row for every subset group of its item, once unfiltered and once filtered (the
        long form `cells.sum_cells` sums without building it)."""
        leaf = df["item_id"].map(self.item_subset)
        merged = df.assign(leaf=leaf.to_numpy()).merge(self.membership, on="leaf", how="inner")
        merged = merged.drop(columns=["leaf"])
        if "subset" in merged.columns:
            merged = merged.drop(columns=["subset"])
        merged = merged.rename(columns={"group": "subset"})
        kept = merged[~merged["item_id"].isin(self.flagged)]
        return pd.concat([merged.assign(filtered=False), kept.assign(filtered=True)], ignore_index=True)

    def item_mask(self, group: str, filtered: bool) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Which of `items` belong to `group` (and, filtered, are not audit-flagged)."""
        g = list(self.groups).index(group)
        mask: np.ndarray[Any, np.dtype[np.bool_]] = self.group_leaves[g][self.item_leaf]
        return mask & ~self.item_flagged if filtered else mask


def ordered_conditions(df: pd.DataFrame, order: Sequence[str]) -> list[str]:
    """en first, then `order` (the run's recorded conditions, or the config's, as the caller read
    them), then any others by name: pairs read zh->ls whatever order judgments were written in."""
    conds = set(df.loc[df["kind"].isin(["pair", "tie_probe"]), "condition"].tolist())
    rank = {name: i for i, name in enumerate([SOURCE, *order])}
    return sorted(conds, key=lambda c: (rank.get(c, len(rank)), c))


# Pairs among the targets (zh->ls) are compared up to this many targets; a many-language study
# (M-RewardBench's 23) compares each target with en only: 253 target pairs would bury the en->c rows.
MAX_TARGETS_PAIRED = 3


def condition_pairs(
    conditions: Sequence[str], probes: Mapping[str, ProbeOrigin] | None = None
) -> list[ConditionPair]:
    """en->c for every other condition, then every pair among the non-en conditions (zh->ls) when
    there are at most MAX_TARGETS_PAIRED of them (or no en). `probes` (probe condition -> the
    condition it was made from) adds base->probe for a probe of a language (`zh->zh+length`); probe
    conditions are not paired among themselves or with languages."""
    probes = probes or {}
    others = [c for c in conditions if c != SOURCE]
    languages = [c for c in others if c not in probes]
    pairs = [ConditionPair(SOURCE, c) for c in others] if SOURCE in conditions else []
    if len(languages) <= MAX_TARGETS_PAIRED or SOURCE not in conditions:
        pairs += [ConditionPair(a, b) for i, a in enumerate(languages) for b in languages[i + 1 :]]
    present = set(conditions)
    made = [(probes[c].base, c) for c in others if c in probes]
    pairs += [ConditionPair(base, c) for base, c in made if base != SOURCE and base in present]
    return pairs


def pair_names(conditions: Sequence[str], probes: Mapping[str, ProbeOrigin] | None = None) -> list[str]:
    """Every condition pair's record name (`en->zh`, ..., `zh->ls`), in `condition_pairs` order."""
    return [str(pair) for pair in condition_pairs(conditions, probes)]


def pair_flags(df: pd.DataFrame) -> pd.DataFrame:
    """Boolean columns of every pair judgment, from which each per-judgment metric is a column sum."""
    p = df[df["kind"] == "pair"].copy()
    v = p["verdict"]
    answered = v.notna()
    invalid = v.eq("invalid")
    valid = answered & ~invalid
    labelled = p["label"].notna()
    lab = p["label"].map({1.0: "1", 2.0: "2"})
    correct = valid & labelled & v.eq(lab)
    tie = valid & v.eq("tie")
    p["vcode"] = v.where(valid)
    p["planned"] = 1
    p["answered"] = answered.astype("int8")
    p["missing"] = (~answered).astype("int8")
    p["invalid"] = invalid.astype("int8")
    p["valid"] = valid.astype("int8")
    p["acc_n"] = (answered & labelled).astype("int8")
    p["correct"] = correct.astype("int8")
    p["half"] = correct.astype(float) + 0.5 * (tie & labelled).astype(float)
    p["half_sq"] = correct.astype(float) + 0.25 * (tie & labelled).astype(float)
    p["tie"] = tie.astype("int8")
    p["raw_a"] = (valid & p["winner"].eq("A")).astype("int8")
    conf = valid & p["confidence"].notna()
    p["conf_n"] = conf.astype("int8")
    p["conf_sum"] = p["confidence"].where(conf, 0.0)
    p["conf_sq"] = p["conf_sum"] ** 2
    cal = conf & labelled
    p["cal_n"] = cal.astype("int8")
    p["cal_conf"] = p["confidence"].where(cal)
    p["cal_y"] = correct.astype(float).where(cal)
    p["correct_code"] = correct.astype(float).where(valid & labelled)
    return p


@dataclass(frozen=True)
class UnitTables:
    """The per-unit rows every pair family is summed from, and the item-clustered bootstrap resamples.

    pairs: one row per pair judgment (`pair_flags`); flips: per (judge, item, order, condition pair);
    position: per (judge, item, condition); increase: per (judge, item, en->c); judge_flips and
    judge_position: the same units compared between two judges (judge `J1 vs J2`); lengths: per
    (judge, item, condition) the length rules' credits (`length_artefact.length_units`; empty when
    the outputs' texts are not known).
    """

    pairs: pd.DataFrame
    flips: pd.DataFrame
    position: pd.DataFrame
    increase: pd.DataFrame
    judge_flips: pd.DataFrame
    judge_position: pd.DataFrame
    lengths: pd.DataFrame = field(default_factory=pd.DataFrame)


def concat_labelled(parts: Sequence[tuple[pd.DataFrame, str]], column: str) -> pd.DataFrame:
    """The frames one under another, `column` naming each row's frame as a categorical whose
    categories sort as the names do (so it groups and orders as a column of the names would): a
    million-row column of a few dozen pair names was slow to build and to factorize as strings."""
    if not parts:
        return pd.DataFrame()
    frame = pd.concat([f for f, _ in parts], ignore_index=True)
    names = sorted({label for _, label in parts})
    at = {name: code for code, name in enumerate(names)}
    codes = np.concatenate([np.full(len(f), at[label], dtype=np.int32) for f, label in parts])
    frame[column] = pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))
    return frame
