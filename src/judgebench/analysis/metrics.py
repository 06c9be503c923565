"""Every metric of PROTOCOL §4, per judge x condition x subset x filtered, computed column-wise.

Why a table-at-a-time design: a full run is 13,408 judgments and several thousand metric records; each
family of metrics is a handful of boolean columns summed by one pandas groupby, intervals are computed
for all records at once (statsmodels accepts arrays), and the item-clustered bootstrap is one matrix
product per item set (`bootstrap.py`). Denominators follow PROTOCOL §4 exactly:

- missing calls (no verdict) are left out of every metric and counted (`missing_rate`, `JudgeSummary`);
- accuracy is over answered judgments with a label, an invalid answer counting as wrong;
- flip rates, gold flips, McNemar and position inconsistency only use pairs whose two verdicts are valid;
- `position_a_rate` and `tie_rate` are over valid judgments, `invalid_rate` over answered ones;
- tie-probe shares are over valid probes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from judgebench.analysis import stats
from judgebench.analysis.bootstrap import percentile_interval, replicate_ratios, resample_weights
from judgebench.data.llmbar import LLMBAR_SUBSETS
from judgebench.errors import RunDirError
from judgebench.records import AuditFlag, Judgment, MetricRecord
from judgebench.rundir import AUDIT, JUDGMENTS, RunDir, last_per_key, read_jsonl

ALL = "all"
MEAN_JUDGE = "mean"
VS = " vs "
CHOICES = ("1", "2")
CELL = ["judge", "condition", "subset", "filtered"]
BOOTSTRAP_MAIN = ("position_inconsistency_increase", "flip_rate_diff", "position_inconsistency_diff", "ece")


class ReportSettings(BaseModel):
    """User-settable thresholds of the report and the readiness verdict (defaults: README)."""

    confidence: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.95
    bootstrap_samples: Annotated[int, Field(ge=0)] = 1000
    seed: int = 0
    max_flip_rate: float = 0.15
    max_position_increase: float = 0.05
    min_detectable_effect: float = 0.05
    power: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.8
    # which table the readiness verdict reads: the full one (reference) or the audit-filtered one
    readiness_filtered: bool = False


class ReadinessVerdict(BaseModel):
    """Should this judge be trusted on this target condition? With the numbers that decided it."""

    judge: str
    condition: str
    status: Literal["pass", "fail", "inconclusive"]
    reasons: list[str]


class JudgeSummary(BaseModel):
    """Call accounting per judge: what was planned, answered, missing or invalid, and what it cost."""

    judge: str
    judgments: int
    answered: int
    missing: int
    invalid: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class Analysis(BaseModel):
    """Everything `report` renders: metric records, readiness verdicts and call accounting."""

    records: list[MetricRecord]
    readiness: list[ReadinessVerdict]
    judges: list[JudgeSummary]
    flagged_items: list[str]
    conditions: list[str]
    subsets: list[str]
    settings: ReportSettings


# --------------------------------------------------------------------------------------------------
# input frame


def _frame(judgments: Iterable[Judgment]) -> pd.DataFrame:
    """One row per call key (the last judgment wins), verdicts normalised to lower-case strings."""
    rows = [
        (
            j.judge,
            j.item_id,
            j.subset,
            j.kind,
            j.condition,
            j.order,
            None if j.verdict is None else j.verdict.strip().lower(),
            j.winner,
            float(j.label) if j.label is not None else math.nan,
            float(j.confidence) if j.confidence is not None else math.nan,
            j.usage.input_tokens if j.usage else 0,
            j.usage.output_tokens if j.usage else 0,
            j.cost_usd if j.cost_usd is not None else math.nan,
        )
        for j in judgments
    ]
    cols = [
        "judge",
        "item_id",
        "subset",
        "kind",
        "condition",
        "order",
        "verdict",
        "winner",
        "label",
        "confidence",
        "input_tokens",
        "output_tokens",
        "cost_usd",
    ]
    df = pd.DataFrame(rows, columns=cols)
    df = df.drop_duplicates(["judge", "item_id", "kind", "condition", "order"], keep="last")
    return df.reset_index(drop=True)


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


_LLMBAR_ORDER = list(LLMBAR_SUBSETS)


def _subset_rank(name: str) -> tuple[int, str]:
    """LLMBar's subsets in the paper's order, then any others by name."""
    return (_LLMBAR_ORDER.index(name) if name in _LLMBAR_ORDER else len(_LLMBAR_ORDER), name)


def subset_groups(leaves: Sequence[str]) -> dict[str, list[str]]:
    """`all`, then each top-level path with its aggregate before its leaves (Natural, Adversarial, ...)."""
    groups: dict[str, list[str]] = {ALL: list(leaves)}
    for top in _unique(leaf.split("/", 1)[0] for leaf in leaves):
        members = [leaf for leaf in leaves if leaf == top or leaf.startswith(top + "/")]
        if any("/" in m for m in members):
            groups[top] = members
        for leaf in members:
            groups.setdefault(leaf, [leaf])
    return groups


class _Layout:
    """Which subset groups each item belongs to and which items the filtered tables drop."""

    def __init__(self, df: pd.DataFrame, flagged: set[str]) -> None:
        items = df.drop_duplicates("item_id")[["item_id", "subset"]]
        self.leaves = sorted(_unique(items["subset"].tolist()), key=_subset_rank)
        self.groups = subset_groups(self.leaves)
        self.items: list[str] = items["item_id"].tolist()
        self.item_subset = dict(zip(items["item_id"], items["subset"], strict=True))
        self.flagged = flagged
        self.membership = pd.DataFrame(
            [(leaf, g) for g, leaves in self.groups.items() for leaf in leaves], columns=["leaf", "group"]
        )

    def expand(self, df: pd.DataFrame) -> pd.DataFrame:
        """Repeat each row for every subset group of its item, once unfiltered and once filtered."""
        leaf = df["item_id"].map(self.item_subset)
        merged = df.assign(leaf=leaf.to_numpy()).merge(self.membership, on="leaf", how="inner")
        merged = merged.drop(columns=["leaf"])
        if "subset" in merged.columns:
            merged = merged.drop(columns=["subset"])
        merged = merged.rename(columns={"group": "subset"})
        kept = merged[~merged["item_id"].isin(self.flagged)]
        return pd.concat([merged.assign(filtered=False), kept.assign(filtered=True)], ignore_index=True)

    def item_mask(self, group: str, filtered: bool) -> np.ndarray[Any, np.dtype[np.bool_]]:
        members = set(self.groups[group])
        return np.array(
            [self.item_subset[i] in members and not (filtered and i in self.flagged) for i in self.items],
            dtype=bool,
        )


def _conditions(df: pd.DataFrame, order: Sequence[str] | None = None) -> list[str]:
    """en first, then `order` (the run's recorded conditions), else configs/conditions.toml's order
    (zh, ls, ...), then any others by name: pairs read zh->ls whatever order judgments were written in."""
    conds = set(df.loc[df["kind"].isin(["pair", "tie_probe"]), "condition"].tolist())
    if order is None:
        from judgebench.conditions import load_conditions

        order = list(load_conditions())
    rank = {name: i for i, name in enumerate(["en", *order])}
    return sorted(conds, key=lambda c: (rank.get(c, len(rank)), c))


def condition_pairs(conditions: Sequence[str]) -> list[tuple[str, str]]:
    """en->c for every other condition, then every pair among the non-en conditions (zh->ls)."""
    others = [c for c in conditions if c != "en"]
    pairs = [("en", c) for c in others] if "en" in conditions else []
    pairs += [(a, b) for i, a in enumerate(others) for b in others[i + 1 :]]
    return pairs


# --------------------------------------------------------------------------------------------------
# per-row flags


def _pair_flags(df: pd.DataFrame) -> pd.DataFrame:
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
    p["answered"] = answered.astype(int)
    p["missing"] = (~answered).astype(int)
    p["invalid"] = invalid.astype(int)
    p["valid"] = valid.astype(int)
    p["acc_n"] = (answered & labelled).astype(int)
    p["correct"] = correct.astype(int)
    p["half"] = correct.astype(float) + 0.5 * (tie & labelled).astype(float)
    p["half_sq"] = correct.astype(float) + 0.25 * (tie & labelled).astype(float)
    p["tie"] = tie.astype(int)
    p["raw_a"] = (valid & p["winner"].eq("A")).astype(int)
    conf = valid & p["confidence"].notna()
    p["conf_n"] = conf.astype(int)
    p["conf_sum"] = p["confidence"].where(conf, 0.0)
    p["conf_sq"] = p["conf_sum"] ** 2
    cal = conf & labelled
    p["cal_n"] = cal.astype(int)
    p["cal_conf"] = p["confidence"].where(cal)
    p["cal_y"] = correct.astype(float).where(cal)
    p["correct_code"] = correct.astype(float).where(valid & labelled)
    return p


def _flip_rows(p: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """One row per (judge, item, order, condition pair) with the agreement flags of PROTOCOL §4."""
    if not pairs:
        return pd.DataFrame()
    idx = ["judge", "item_id", "order"]
    verdict = p.set_index([*idx, "condition"])["vcode"].unstack("condition")
    correct = p.set_index([*idx, "condition"])["correct_code"].unstack("condition")
    out = []
    for c1, c2 in pairs:
        if c1 not in verdict.columns or c2 not in verdict.columns:
            continue
        a, b = verdict[c1], verdict[c2]
        ca, cb = correct[c1], correct[c2]
        both = a.notna() & b.notna()
        lab = both & ca.notna() & cb.notna()
        a_choice, b_choice = a.isin(CHOICES), b.isin(CHOICES)
        frame = pd.DataFrame(
            {
                "both": both.astype(int),
                "flip": (both & a.ne(b)).astype(int),
                "lab": lab.astype(int),
                "gold_flip": (lab & ca.ne(cb)).astype(int),
                "b": (lab & ca.eq(1.0) & cb.eq(0.0)).astype(int),
                "c": (lab & ca.eq(0.0) & cb.eq(1.0)).astype(int),
                "reversal": (both & a_choice & b_choice & a.ne(b)).astype(int),
                "to_tie": (both & a_choice & b.eq("tie")).astype(int),
                "from_tie": (both & a.eq("tie") & b_choice).astype(int),
            }
        )
        out.append(frame.reset_index().assign(condition=f"{c1}->{c2}"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _position_rows(p: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, item, condition): are both orders valid, and do their verdicts differ?"""
    wide = p.set_index(["judge", "item_id", "condition", "order"])["vcode"].unstack("order")
    for order in ("orig", "swap"):
        if order not in wide.columns:
            wide[order] = np.nan
    both = wide["orig"].notna() & wide["swap"].notna()
    frame = pd.DataFrame(
        {"pboth": both.astype(int), "incon": (both & wide["orig"].ne(wide["swap"])).astype(int)}
    )
    return frame.reset_index()


def _position_increase_rows(pos: pd.DataFrame, conditions: Sequence[str]) -> pd.DataFrame:
    """Per (judge, item, en->c): items with both orders valid in en and in c, inconsistent in each."""
    if "en" not in conditions or pos.empty:
        return pd.DataFrame()
    both = pos.set_index(["judge", "item_id", "condition"])["pboth"].unstack("condition", fill_value=0)
    incon = pos.set_index(["judge", "item_id", "condition"])["incon"].unstack("condition", fill_value=0)
    out = []
    for c in conditions:
        if c == "en" or c not in both.columns or "en" not in both.columns:
            continue
        paired = (both["en"] == 1) & (both[c] == 1)
        ic = paired & (incon[c] == 1)
        ie = paired & (incon["en"] == 1)
        frame = pd.DataFrame(
            {
                "paired": paired.astype(int),
                "inc_c": ic.astype(int),
                "inc_en": ie.astype(int),
                "b": (ic & ~ie).astype(int),
                "c": (ie & ~ic).astype(int),
            }
        )
        out.append(frame.reset_index().assign(condition=f"en->{c}"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _judge_pair_rows(
    rows: pd.DataFrame, unit: list[str], both_col: str, hit_col: str, judges: Sequence[str]
) -> pd.DataFrame:
    """Judge-vs-judge paired rows on units both judges have valid: who flips where the other does not."""
    if rows.empty or len(judges) < 2:
        return pd.DataFrame()
    both = rows.set_index([*unit, "judge"])[both_col].unstack("judge", fill_value=0)
    hit = rows.set_index([*unit, "judge"])[hit_col].unstack("judge", fill_value=0)
    out = []
    for i, j1 in enumerate(judges):
        for j2 in judges[i + 1 :]:
            if j1 not in both.columns or j2 not in both.columns:
                continue
            common = (both[j1] == 1) & (both[j2] == 1)
            h1 = common & (hit[j1] == 1)
            h2 = common & (hit[j2] == 1)
            frame = pd.DataFrame(
                {
                    "common": common.astype(int),
                    "hit1": h1.astype(int),
                    "hit2": h2.astype(int),
                    "b": (h1 & ~h2).astype(int),
                    "c": (h2 & ~h1).astype(int),
                }
            )
            out.append(frame.reset_index().assign(judge=f"{j1}{VS}{j2}"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


# --------------------------------------------------------------------------------------------------
# records


def _sum_cells(layout: _Layout, rows: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    if rows.empty:
        return pd.DataFrame(columns=[*CELL, *cols])
    expanded = layout.expand(rows[["judge", "item_id", "condition", *cols]])
    return expanded.groupby(CELL, sort=False, observed=True)[cols].sum().reset_index()


def _proportion(
    agg: pd.DataFrame, metric: str, k: str, n: str, confidence: float, *, zero_is_null: bool = False
) -> pd.DataFrame:
    """Proportion records k / n with Wilson intervals, vectorised over every cell."""
    if agg.empty:
        return pd.DataFrame()
    kk = agg[k].to_numpy(dtype=float)
    nn = agg[n].to_numpy(dtype=float)
    low, high = stats.wilson(kk, nn, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(nn > 0, kk / np.where(nn > 0, nn, 1.0), np.nan)
    out = agg[CELL].copy()
    out["metric"] = metric
    out["value"] = value
    out["n"] = nn.astype(int)
    out["k"] = kk.astype(int)
    out["ci_low"] = low
    out["ci_high"] = high
    out["ci_method"] = "wilson"
    return out


def _pair_records(layout: _Layout, p: pd.DataFrame, conf: float) -> pd.DataFrame:
    cols = [
        "planned",
        "answered",
        "missing",
        "invalid",
        "valid",
        "acc_n",
        "correct",
        "half",
        "half_sq",
        "tie",
        "raw_a",
        "conf_n",
        "conf_sum",
        "conf_sq",
        "cal_n",
    ]
    agg = _sum_cells(layout, p, cols)
    if agg.empty:
        return pd.DataFrame()
    parts = [
        _proportion(agg, "strict_accuracy", "correct", "acc_n", conf),
        _proportion(agg, "position_a_rate", "raw_a", "valid", conf),
        _proportion(agg, "tie_rate", "tie", "valid", conf),
        _proportion(agg, "invalid_rate", "invalid", "answered", conf),
        _proportion(agg, "missing_rate", "missing", "planned", conf),
    ]
    parts.append(_mean_record(agg, "tie_half_accuracy", "half", "half_sq", "acc_n", conf))
    with_conf = agg[agg["conf_n"] > 0]
    if not with_conf.empty:
        parts.append(_mean_record(with_conf, "mean_confidence", "conf_sum", "conf_sq", "conf_n", conf))
    parts.append(_calibration_records(layout, p, conf))
    return pd.concat([x for x in parts if not x.empty], ignore_index=True)


def _mean_record(agg: pd.DataFrame, metric: str, s: str, sq: str, n: str, conf: float) -> pd.DataFrame:
    """Mean with the normal interval mean +- z s / sqrt(n), s the sample sd (PROTOCOL §4)."""
    total = agg[s].to_numpy(dtype=float)
    total_sq = agg[sq].to_numpy(dtype=float)
    nn = agg[n].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(nn > 0, total / np.where(nn > 0, nn, 1.0), np.nan)
        var = np.where(nn > 1, (total_sq - nn * mean**2) / np.where(nn > 1, nn - 1.0, 1.0), np.nan)
    sd = np.sqrt(np.clip(var, 0.0, None))
    low, high = stats.normal_mean_ci(mean, sd, nn, conf)
    out = agg[CELL].copy()
    out["metric"] = metric
    out["value"] = mean
    out["n"] = nn.astype(int)
    out["ci_low"] = low
    out["ci_high"] = high
    out["ci_method"] = "normal"
    return out


def _calibration_records(layout: _Layout, p: pd.DataFrame, conf: float) -> pd.DataFrame:
    """Brier score (with a normal interval) and 10-bin ECE of stated confidence vs strict correctness."""
    cal = p[p["cal_n"] == 1]
    if cal.empty:
        return pd.DataFrame()
    rows = cal[["judge", "item_id", "condition", "cal_conf", "cal_y"]].copy()
    rows["sq"] = (rows["cal_conf"] - rows["cal_y"]) ** 2
    rows["sq2"] = rows["sq"] ** 2
    rows["bin"] = np.minimum((rows["cal_conf"].to_numpy() * 10).astype(int), 9)
    rows["one"] = 1
    ex = layout.expand(rows)
    agg = ex.groupby(CELL, sort=False, observed=True)[["sq", "sq2", "one"]].sum().reset_index()
    brier = _mean_record(agg, "brier", "sq", "sq2", "one", conf)
    brier["ci_low"] = np.clip(brier["ci_low"], 0.0, 1.0)
    bins = ex.groupby([*CELL, "bin"], sort=False, observed=True)[["cal_conf", "cal_y", "one"]].sum()
    bins["gap"] = (bins["cal_conf"] - bins["cal_y"]).abs()
    per_cell = bins.groupby(level=CELL, sort=False, observed=True)[["gap", "one"]].sum().reset_index()
    ece = per_cell[CELL].copy()
    ece["metric"] = "ece"
    ece["value"] = per_cell["gap"] / per_cell["one"]
    ece["n"] = per_cell["one"].astype(int)
    return pd.concat([brier, ece], ignore_index=True)


def _flip_records(layout: _Layout, flips: pd.DataFrame, conf: float) -> pd.DataFrame:
    cols = ["both", "flip", "lab", "gold_flip", "b", "c", "reversal", "to_tie", "from_tie"]
    agg = _sum_cells(layout, flips, cols)
    if agg.empty:
        return pd.DataFrame()
    parts = [
        _proportion(agg, "flip_rate", "flip", "both", conf),
        _proportion(agg, "gold_flip_rate", "gold_flip", "lab", conf),
        _proportion(agg, "flip_reversal_rate", "reversal", "both", conf),
        _proportion(agg, "flip_to_tie_rate", "to_tie", "both", conf),
        _proportion(agg, "flip_from_tie_rate", "from_tie", "both", conf),
    ]
    mc = agg[CELL].copy()
    mc["metric"] = "mcnemar"
    mc["value"] = (agg["b"] - agg["c"]).astype(float)
    mc["n"] = agg["lab"].astype(int)
    mc["b"] = agg["b"].astype(int)
    mc["c"] = agg["c"].astype(int)
    mc["p"] = stats.mcnemar_exact_many(agg["b"], agg["c"])  # PROTOCOL §4: p = 1 when b + c = 0
    mc["p_family"] = "mcnemar"
    parts.append(mc)
    return pd.concat(parts, ignore_index=True)


def _position_records(layout: _Layout, pos: pd.DataFrame, inc: pd.DataFrame, conf: float) -> pd.DataFrame:
    parts = []
    agg = _sum_cells(layout, pos, ["pboth", "incon"])
    if not agg.empty:
        parts.append(_proportion(agg, "position_inconsistency", "incon", "pboth", conf))
    agg_inc = _sum_cells(layout, inc, ["paired", "inc_c", "inc_en", "b", "c"])
    if not agg_inc.empty:
        parts.append(
            _paired_diff(agg_inc, "position_inconsistency_increase", "paired", "position_increase", conf)
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _paired_diff(agg: pd.DataFrame, metric: str, n_col: str, family: str, conf: float) -> pd.DataFrame:
    """(b - c) / n with an exact McNemar p on the discordant units and a Wald interval (bootstrap later)."""
    out = agg[CELL].copy()
    n = agg[n_col].to_numpy(dtype=int)
    b = agg["b"].to_numpy(dtype=int)
    c = agg["c"].to_numpy(dtype=int)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["value"] = np.where(n > 0, (b - c) / np.where(n > 0, n, 1), np.nan)
    out["ci_low"], out["ci_high"] = stats.paired_diff_wald(b, c, n, conf)
    out["ci_method"] = "wald"
    out["metric"] = metric
    out["n"] = n
    out["b"] = b
    out["c"] = c
    out["p"] = np.where(n > 0, stats.mcnemar_exact_many(b, c), np.nan)
    out["p_family"] = family
    return out


def _tie_probe_records(layout: _Layout, df: pd.DataFrame, conf: float) -> pd.DataFrame:
    t = df[df["kind"] == "tie_probe"].copy()
    if t.empty:
        return pd.DataFrame()
    v = t["verdict"]
    answered = v.notna()
    invalid = v.eq("invalid")
    valid = answered & ~invalid
    t["answered"] = answered.astype(int)
    t["invalid"] = invalid.astype(int)
    t["valid"] = valid.astype(int)
    t["en"] = (valid & v.eq("en")).astype(int)
    t["target"] = (valid & v.eq(t["condition"])).astype(int)
    t["tie"] = (valid & v.eq("tie")).astype(int)
    t["decisive"] = t["en"] + t["target"]
    agg = _sum_cells(layout, t, ["answered", "invalid", "valid", "en", "target", "tie", "decisive"])
    parts = [
        _proportion(agg, "tie_probe_en", "en", "valid", conf),
        _proportion(agg, "tie_probe_tie", "tie", "valid", conf),
        _proportion(agg, "tie_probe_invalid_rate", "invalid", "answered", conf),
    ]
    # the target's share is named after the target condition: tie_probe_zh for zh, tie_probe_ja for ja
    target = _proportion(agg, "tie_probe_target", "target", "valid", conf)
    target["metric"] = "tie_probe_" + target["condition"].astype(str)
    parts.append(target)
    share = _proportion(agg, "tie_probe_en_share", "en", "decisive", conf)
    share["p"] = stats.binom_test_half_many(agg["en"], agg["decisive"])
    share["p_family"] = "tie_probe"
    parts.append(share)
    return pd.concat(parts, ignore_index=True)


def _judge_comparison_records(
    layout: _Layout, jflip: pd.DataFrame, jpos: pd.DataFrame, conf: float
) -> pd.DataFrame:
    parts = []
    for rows, metric in ((jflip, "flip_rate_diff"), (jpos, "position_inconsistency_diff")):
        agg = _sum_cells(layout, rows, ["common", "hit1", "hit2", "b", "c"])
        if not agg.empty:
            parts.append(_paired_diff(agg, metric, "common", "judge_comparison", conf))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# --------------------------------------------------------------------------------------------------
# bootstrap


def _boot_long(
    p: pd.DataFrame,
    flips: pd.DataFrame,
    pos: pd.DataFrame,
    inc: pd.DataFrame,
    jflip: pd.DataFrame,
    jpos: pd.DataFrame,
) -> pd.DataFrame:
    """Per-item numerators and denominators of each bootstrapped ratio, keyed by judge, metric, condition."""
    pieces: list[pd.DataFrame] = []

    def add(rows: pd.DataFrame, metric: str, num: str | tuple[str, str], den: str) -> None:
        if rows.empty:
            return
        frame = rows[["judge", "item_id", "condition"]].copy()
        frame["num"] = rows[num[0]] - rows[num[1]] if isinstance(num, tuple) else rows[num]
        frame["den"] = rows[den]
        frame["metric"] = metric
        pieces.append(frame)

    add(p, "strict_accuracy", "correct", "acc_n")
    add(p, "tie_half_accuracy", "half", "acc_n")
    add(flips, "flip_rate", "flip", "both")
    add(pos, "position_inconsistency", "incon", "pboth")
    add(inc, "position_inconsistency_increase", ("inc_c", "inc_en"), "paired")
    add(jflip, "flip_rate_diff", ("hit1", "hit2"), "common")
    add(jpos, "position_inconsistency_diff", ("hit1", "hit2"), "common")
    if not pieces:
        return pd.DataFrame(columns=["judge", "item_id", "condition", "metric", "num", "den"])
    long = pd.concat(pieces, ignore_index=True)
    return (
        long.groupby(["item_id", "judge", "metric", "condition"], sort=False)[["num", "den"]]
        .sum()
        .reset_index()
    )


def _ece_matrices(
    layout: _Layout, p: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.float64]]]:
    """Per item and judge x condition: summed (confidence - correctness) in each of 10 bins, and the count.

    ECE over resampled items is sum_bins |W @ gap| / (W @ count), so it bootstraps with the same weights.
    """
    cal = p[p["cal_n"] == 1] if "cal_n" in p.columns else p.iloc[0:0]
    keys = cal[["judge", "condition"]].drop_duplicates().reset_index(drop=True)
    n_items, n_keys = len(layout.items), len(keys)
    gap = np.zeros((n_items, n_keys * 10))
    count = np.zeros((n_items, n_keys))
    if n_keys:
        key_id = cal.merge(keys.reset_index(), on=["judge", "condition"], how="left")["index"].to_numpy()
        pos = {item: i for i, item in enumerate(layout.items)}
        rows = cal["item_id"].map(pos).to_numpy(dtype=int)
        conf = cal["cal_conf"].to_numpy(dtype=float)
        bins = np.minimum((conf * 10).astype(int), 9)
        np.add.at(gap, (rows, key_id * 10 + bins), conf - cal["cal_y"].to_numpy(dtype=float))
        np.add.at(count, (rows, key_id), 1.0)
    return keys.assign(metric="ece"), gap, count


def _bootstrap(
    layout: _Layout, long: pd.DataFrame, p: pd.DataFrame, settings: ReportSettings
) -> pd.DataFrame:
    """Item-clustered percentile intervals for every (judge, metric, condition) x subset x filtered."""
    if long.empty or settings.bootstrap_samples <= 0:
        return pd.DataFrame(
            columns=["judge", "metric", "condition", "subset", "filtered", "boot_low", "boot_high"]
        )
    keys = ["judge", "metric", "condition"]
    num = long.pivot_table(index="item_id", columns=keys, values="num", aggfunc="sum", fill_value=0.0)
    den = long.pivot_table(index="item_id", columns=keys, values="den", aggfunc="sum", fill_value=0.0)
    num = num.reindex(index=layout.items, fill_value=0.0)
    den = den.reindex(index=layout.items, columns=num.columns, fill_value=0.0)
    num_m = num.to_numpy(dtype=np.float64)
    den_m = den.to_numpy(dtype=np.float64)
    columns = pd.DataFrame(list(num.columns), columns=keys)
    ece_keys, ece_gap, ece_count = _ece_matrices(layout, p)
    out = []
    for group in layout.groups:
        for filtered in (False, True):
            mask = layout.item_mask(group, filtered)
            if not mask.any():
                continue
            weights = resample_weights(
                int(mask.sum()), settings.bootstrap_samples, settings.seed, f"{group}|{filtered}"
            )
            reps = replicate_ratios(weights, num_m[mask], den_m[mask])
            low, high = percentile_interval(reps, settings.confidence)
            frame = columns.copy()
            frame["subset"] = group
            frame["filtered"] = filtered
            frame["boot_low"] = low
            frame["boot_high"] = high
            out.append(frame[~np.isnan(low)])
            if len(ece_keys):
                per_bin = np.abs(weights @ ece_gap[mask]).reshape(len(weights), len(ece_keys), 10)
                total = weights @ ece_count[mask]
                with np.errstate(divide="ignore", invalid="ignore"):
                    reps = np.where(total > 0, per_bin.sum(axis=2) / np.where(total > 0, total, 1.0), np.nan)
                low, high = percentile_interval(reps, settings.confidence)
                frame = ece_keys.assign(subset=group, filtered=filtered, boot_low=low, boot_high=high)
                out.append(frame[~np.isnan(low)])
    return pd.concat(out, ignore_index=True)


# --------------------------------------------------------------------------------------------------
# assembly


def _adjust_and_power(table: pd.DataFrame, settings: ReportSettings) -> pd.DataFrame:
    """Benjamini-Hochberg within each family (per subset and table) and the 80%-power MDE of null results."""
    if "p" not in table.columns:
        return table
    alpha = 1.0 - settings.confidence
    # a cell with no pairs (p = 1 by definition) tests nothing and does not widen its family
    tested = table["p"].notna() & (table["n"] > 0)
    table["p_adj"] = np.nan
    fam = table.loc[tested, ["p_family", "subset", "filtered"]]
    for _, idx in fam.groupby(["p_family", "subset", "filtered"], sort=False).groups.items():
        table.loc[idx, "p_adj"] = stats.bh_adjust(table.loc[idx, "p"].tolist())
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
        if metrics[i] == "tie_probe_en_share":
            m = stats.mde_binomial_half(int(ns[i]), alpha=alpha, power=settings.power)
        else:
            m = stats.mde_mcnemar(int(ns[i]), int(discordant[i]), alpha=alpha, power=settings.power)
        mde[i] = math.nan if m is None else m
        under[i] = m is None or m > settings.min_detectable_effect
    table["mde"] = mde
    table["underpowered"] = under
    adjusted = table["p_adj"].to_numpy(dtype=float)
    table["significant"] = [None if math.isnan(q) else bool(q < alpha) for q in adjusted]
    return table


def _mean_over_judges(table: pd.DataFrame) -> pd.DataFrame:
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
            "ci_method": "mean_over_judges",
        }
    )


_CORE = ("judge", "metric", "condition", "subset", "filtered", "value", "n", "ci_low", "ci_high", "p")
_COUNTS = ("n", "b", "c", "k")


def _to_records(table: pd.DataFrame) -> list[MetricRecord]:
    """Rows to records: NaN becomes null; an extra field is only written where it applies."""
    table = table.copy()
    for col in _CORE:
        if col not in table.columns:
            table[col] = None
    for col in _COUNTS:
        if col in table.columns:
            table[col] = table[col].astype("Int64")  # nullable ints: b, c, k only exist on some records
    table["n"] = table["n"].fillna(0)
    table["filtered"] = table["filtered"].astype(bool)
    plain = table.astype(object).where(table.notna(), None)
    extras = [c for c in table.columns if c not in _CORE]
    out = []
    for row in plain.to_dict("records"):
        data = {k: row[k] for k in _CORE}
        data.update({k: row[k] for k in extras if row[k] is not None})
        out.append(MetricRecord.model_validate(data))
    return out


def _judge_summaries(df: pd.DataFrame) -> list[JudgeSummary]:
    out = []
    for judge, g in df.groupby("judge", sort=False):
        answered = g["verdict"].notna()
        costs = g["cost_usd"].dropna()
        out.append(
            JudgeSummary(
                judge=str(judge),
                judgments=len(g),
                answered=int(answered.sum()),
                missing=int((~answered).sum()),
                invalid=int(g["verdict"].eq("invalid").sum()),
                input_tokens=int(g["input_tokens"].sum()),
                output_tokens=int(g["output_tokens"].sum()),
                cost_usd=float(costs.sum()) if len(costs) else None,
            )
        )
    return out


def analyze(
    judgments: Iterable[Judgment],
    *,
    flagged_items: Iterable[str] = (),
    settings: ReportSettings | None = None,
    condition_order: Sequence[str] | None = None,
) -> Analysis:
    """All metric records, readiness verdicts and call accounting of a set of judgments."""
    from judgebench.analysis.readiness import assess_readiness

    settings = settings or ReportSettings()
    conf = settings.confidence
    # one order for every run: sums (and so the last bits of floats) must not depend on the line
    # order in which a faulty or resumed run happened to write its judgments
    df = _frame(sorted(judgments, key=lambda j: j.call_key()))
    flagged = set(flagged_items)
    layout = _Layout(df, flagged)
    conditions = _conditions(df, condition_order)
    judges = _unique(df["judge"].tolist())

    p = _pair_flags(df)
    pairs = condition_pairs([c for c in conditions if c in set(p["condition"])])
    flips = _flip_rows(p, pairs) if not p.empty else pd.DataFrame()
    pos = _position_rows(p) if not p.empty else pd.DataFrame()
    inc = _position_increase_rows(pos, conditions)
    jflip = _judge_pair_rows(flips, ["item_id", "order", "condition"], "both", "flip", judges)
    jpos = _judge_pair_rows(pos, ["item_id", "condition"], "pboth", "incon", judges)

    parts = [
        _pair_records(layout, p, conf) if not p.empty else pd.DataFrame(),
        _flip_records(layout, flips, conf),
        _position_records(layout, pos, inc, conf),
        _tie_probe_records(layout, df, conf),
        _judge_comparison_records(layout, jflip, jpos, conf),
    ]
    parts = [x for x in parts if not x.empty]
    if not parts:
        table = pd.DataFrame(columns=[*CELL, "metric", "value", "n"])
    else:
        table = pd.concat(parts, ignore_index=True)

    boot = _bootstrap(layout, _boot_long(p, flips, pos, inc, jflip, jpos), p, settings)
    if not boot.empty:
        table = table.merge(boot, on=["judge", "metric", "condition", "subset", "filtered"], how="left")
        # paired differences and ECE get the clustered interval as their main (only) interval
        diff = table["metric"].isin(BOOTSTRAP_MAIN) & table["boot_low"].notna()
        table.loc[diff, "ci_low"] = table.loc[diff, "boot_low"]
        table.loc[diff, "ci_high"] = table.loc[diff, "boot_high"]
        table.loc[diff, "ci_method"] = "bootstrap"
        table.loc[diff, ["boot_low", "boot_high"]] = np.nan
    table = _adjust_and_power(table, settings)
    mean = _mean_over_judges(table)
    if not mean.empty:
        table = pd.concat([table, mean], ignore_index=True)
    table = _order(table, layout, conditions, judges)
    records = _to_records(table)
    readiness = assess_readiness(records, settings)
    return Analysis(
        records=records,
        readiness=readiness,
        judges=_judge_summaries(df),
        flagged_items=sorted(flagged),
        conditions=conditions,
        subsets=list(layout.groups),
        settings=settings,
    )


def _order(
    table: pd.DataFrame, layout: _Layout, conditions: Sequence[str], judges: Sequence[str]
) -> pd.DataFrame:
    """Stable, readable order: filtered, subset, judge (mean last), metric family, condition."""
    judge_rank = {j: i for i, j in enumerate([*judges, MEAN_JUDGE])}
    subset_rank = {s: i for i, s in enumerate(layout.groups)}
    cond_names = [*conditions, *(f"{a}->{b}" for a, b in condition_pairs(conditions))]
    cond_rank = {c: i for i, c in enumerate(cond_names)}
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


def analyze_run(run: RunDir, settings: ReportSettings | None = None) -> Analysis:
    """Analyse a run folder: the last line per call key of judgments.jsonl, flags from audit.jsonl."""
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(f"{path} does not exist: run `judgebench judge --run {run.path}` first")
    judgments = last_per_key(read_jsonl(path, Judgment), lambda j: j.call_key())
    flagged = {flag.item_id for flag in read_jsonl(run.file(AUDIT), AuditFlag)}
    # the order the run's translate stage recorded (zh, ls, ...): pairs are named zh->ls from it
    translated = run.manifest().stages.translate
    order = translated.condition_names() if translated else []
    return analyze(
        judgments.values(), flagged_items=flagged, settings=settings, condition_order=order or None
    )
