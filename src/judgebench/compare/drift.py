"""Drift between two runs, computed from their paired units: per judge pair, kind and condition, the
share of verdicts that changed (with an item-clustered Wilson interval), how they changed, and an
exact McNemar test of correctness where gold labels exist; then the CI gate over those rows.

Why the clustered interval: an item's two orders (and, pooled, its conditions) tend to change
together, so counting them as independent verdicts would make the interval too narrow and a gate on
it would fail on noise more often than its level says. The Wilson interval is taken at the effective
size n / design effect (Kish), the design effect the ratio of the item-clustered variance of the share
to the binomial one, from the per-item counts (at least 1: 1 when no item has two units, 2 when an
item's two orders always change together).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgebench.analysis.stats import bh_adjust, wilson
from judgebench.compare.model import ALL_CONDITIONS, Drift, GateSettings, GateStatus, Kind


def clustered_wilson(
    changed: np.ndarray, clusters: np.ndarray, confidence: float
) -> tuple[float, float, float] | None:
    """Wilson's interval of the mean of `changed` (0/1 per unit) at the effective size the item
    clusters leave, and the design effect; None when nothing is compared."""
    n = len(changed)
    if n == 0:
        return None
    p = float(changed.mean())
    per_item = (
        pd.DataFrame({"k": changed.astype(float), "c": clusters}).groupby("c")["k"].agg(["sum", "size"])
    )
    deff = 1.0
    if len(per_item) > 1 and 0 < p < 1:
        resid = per_item["sum"].to_numpy() - p * per_item["size"].to_numpy()
        deff = max(1.0, float(np.sum(resid**2)) / n / (p * (1 - p)))
    n_eff = n / deff
    low, high = wilson(p * n_eff, n_eff, confidence)
    return float(low[0]), float(high[0]), deff


def exact_mcnemar(both_right: int, right_to_wrong: int, wrong_to_right: int, both_wrong: int) -> float:
    """Exact two-sided McNemar p-value (statsmodels: the binomial test on the discordant pairs)."""
    from statsmodels.stats.contingency_tables import mcnemar  # deferred: about 1 s to import

    if right_to_wrong + wrong_to_right == 0:
        return 1.0
    table = [[both_right, right_to_wrong], [wrong_to_right, both_wrong]]
    return float(mcnemar(table, exact=True).pvalue)


def _shares(values: pd.Series) -> dict[str, float]:
    counts = values.value_counts()
    total = int(counts.sum())
    return {str(k): round(int(v) / total, 6) for k, v in sorted(counts.items())} if total else {}


def drift_row(units: pd.DataFrame, key: tuple[str, str, Kind, str], confidence: float) -> Drift:
    """One row from the paired units of one judge pair, kind and condition (or all conditions)."""
    judge_a, judge_b, kind, condition = key
    present = units["outcome_a"].notna() & units["outcome_b"].notna()
    done = units[present]
    va, vb = done["outcome_a"].astype(str), done["outcome_b"].astype(str)
    changed = (va != vb).to_numpy()
    interval = clustered_wilson(changed, done["item_id"].to_numpy(dtype=object), confidence)
    moves = Counter(f"{x}->{y}" for x, y in zip(va[changed], vb[changed], strict=True))
    row = Drift(
        judge_a=judge_a,
        judge_b=judge_b,
        kind=kind,
        condition=condition,
        units=len(units),
        missing=int((~present).sum()),
        compared=len(done),
        items=int(done["item_id"].nunique()),
        changed=int(changed.sum()),
        flip_rate=float(changed.mean()) if len(done) else None,
        flip_low=None if interval is None else interval[0],
        flip_high=None if interval is None else interval[1],
        design_effect=None if interval is None else round(interval[2], 4),
        transitions=dict(sorted(moves.items())),
        shares_a=_shares(va),
        shares_b=_shares(vb),
    )
    if kind != "pair" or not len(done):
        return row
    row.position_a_a = float((done["winner_a"] == "A").mean())
    row.position_a_b = float((done["winner_b"] == "A").mean())
    gold = done[done["label"].notna()]
    if len(gold):
        truth = gold["label"].astype(int).astype(str)
        right_a = (gold["outcome_a"].astype(str) == truth).to_numpy()
        right_b = (gold["outcome_b"].astype(str) == truth).to_numpy()
        b = int((right_a & ~right_b).sum())
        c = int((~right_a & right_b).sum())
        row.gold = len(gold)
        row.accuracy_a = float(right_a.mean())
        row.accuracy_b = float(right_b.mean())
        row.right_to_wrong, row.wrong_to_right = b, c
        row.mcnemar_p = exact_mcnemar(int((right_a & right_b).sum()), b, c, int((~right_a & ~right_b).sum()))
    return row


def drift_rows(units: pd.DataFrame, condition_order: Sequence[str], confidence: float) -> list[Drift]:
    """Every judge pair x kind x condition row, conditions in the run's order, then each judge pair's
    pooled `all` row over its pair conditions (when it has more than one)."""
    rank = {c: i for i, c in enumerate(condition_order)}
    out: list[Drift] = []
    for (judge_a, judge_b), pair_units in units.groupby(["judge_a", "judge_b"], sort=False):
        ja, jb = str(judge_a), str(judge_b)
        kinds: tuple[Kind, ...] = ("pair", "tie_probe")
        for kind in kinds:
            of_kind = pair_units[pair_units["kind"] == kind]
            conditions = sorted(set(of_kind["condition"]), key=lambda c: (rank.get(c, len(rank)), c))
            for condition in conditions:
                group = of_kind[of_kind["condition"] == condition]
                out.append(drift_row(group, (ja, jb, kind, str(condition)), confidence))
            if kind == "pair" and len(conditions) > 1:
                out.append(drift_row(of_kind, (ja, jb, kind, ALL_CONDITIONS), confidence))
    return out


def flip_status(row: Drift, limit: float) -> GateStatus | None:
    """Against a flip-rate limit: fail only when the interval's lower bound is above it (the change is
    real at the interval's confidence), pass when its upper bound is at or below it, and `within
    noise` between (the point may be above the limit, but noise could put it there)."""
    if row.flip_low is None or row.flip_high is None:
        return None
    if row.flip_low > limit:
        return "fail"
    return "pass" if row.flip_high <= limit else "within noise"


def apply_gate(rows: list[Drift], gate: GateSettings, confidence: float) -> list[str]:
    """Mark every gated row (pairs: each condition and the pooled row; tie-probes are reported, not
    gated) and return the reasons the gate fails, one line each (empty: it passes). McNemar p-values
    are adjusted (Benjamini-Hochberg) over the gated rows, always, so the file has them either way."""
    gated = [r for r in rows if r.kind == "pair" and r.compared]
    tested = [r for r in gated if r.mcnemar_p is not None]
    for row, adjusted in zip(tested, bh_adjust([r.mcnemar_p or 1.0 for r in tested]), strict=True):
        row.mcnemar_p_adjusted = float(adjusted)
    reasons: list[str] = []
    for row in gated:
        who = row.judge_a if row.judge_a == row.judge_b else f"{row.judge_a} -> {row.judge_b}"
        if gate.flip_rate is not None:
            row.gate_flip = flip_status(row, gate.flip_rate)
            if row.gate_flip == "fail":
                reasons.append(
                    f"{who} {row.condition}: {row.changed} of {row.compared} verdicts changed, flip rate "
                    f"{row.flip_rate:.1%} ({confidence:.0%} interval {row.flip_low:.1%}-{row.flip_high:.1%}) "
                    f"is above the limit {gate.flip_rate:.1%}"
                )
        if gate.mcnemar_alpha is not None and row.mcnemar_p_adjusted is not None:
            failed = row.mcnemar_p_adjusted < gate.mcnemar_alpha
            row.gate_mcnemar = "fail" if failed else "pass"
            if failed:
                reasons.append(
                    f"{who} {row.condition}: accuracy {row.accuracy_a:.1%} -> {row.accuracy_b:.1%} "
                    f"({row.right_to_wrong} right -> wrong, {row.wrong_to_right} wrong -> right), exact "
                    f"McNemar p = {row.mcnemar_p_adjusted:.2g} (adjusted) is below {gate.mcnemar_alpha}"
                )
    return reasons
