"""Drift between two runs, computed from their paired units: per judge pair, kind and condition, the
share of verdicts that changed (with an item-clustered Wilson interval), how they changed, and an
item-clustered McNemar test of correctness where gold labels exist; then the CI gate over those rows.

Why the clustered interval: an item's two orders (and, pooled, its conditions) tend to change
together, so counting them as independent verdicts would make the interval too narrow and a gate on
it would fail on noise more often than its level says. The Wilson interval is taken at the effective
size n / design effect (Kish), the design effect the ratio of the item-clustered variance of the share
to the binomial one, from the per-item counts (at least 1: 1 when no item has two units, 2 when an
item's two orders always change together). The same holds for correctness: the McNemar test the
gate reads takes the item, not the unit, as the independent pair (`clustered_mcnemar`); the unit-level
exact test failed about a quarter of unchanged judges whose changes are item-level
(scripts/audit_compare.py measures both).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgebench.analysis.stats import bh_adjust, wilson
from judgebench.compare.compare_doc import ALL_CONDITIONS, Drift, GateSettings, GateStatus, Kind


def clustered_wilson(
    changed: np.ndarray, clusters: np.ndarray, confidence: float
) -> tuple[float, float, float] | None:
    """Wilson's interval of the mean of `changed` (0/1 per unit) at the effective size the item
    clusters leave, and the design effect; None when nothing is compared. When no unit changed (or
    every one did) the data say nothing of how the items cluster: the item is then the unit (the
    design effect is the units per item), so 30 unchanged units of 5 items bound the rate as 5
    unchanged items would, not as 30 independent verdicts."""
    n = len(changed)
    if n == 0:
        return None
    p = float(changed.mean())
    per_item = (
        pd.DataFrame({"k": changed.astype(float), "c": clusters}).groupby("c")["k"].agg(["sum", "size"])
    )
    deff = 1.0 if 0 < p < 1 else n / len(per_item)
    if len(per_item) > 1 and 0 < p < 1:
        resid = per_item["sum"].to_numpy() - p * per_item["size"].to_numpy()
        deff = max(1.0, float(np.sum(resid**2)) / n / (p * (1 - p)))
    n_eff = n / deff
    low, high = wilson(p * n_eff, n_eff, confidence)
    return float(low[0]), float(high[0]), deff


# the exact sign-flip distribution is computed up to this sum of |b_i - c_i| (about 25M steps of
# convolution); above it, its normal approximation (the two agree to the third digit long before)
EXACT_DISCORDANCE = 5000


def clustered_mcnemar(diffs: np.ndarray) -> float:
    """Two-sided p of "no change in accuracy" with the item as the unit: `diffs` holds, per item, its
    units right in run A and wrong in B minus those wrong in A and right in B (b_i - c_i).

    Why: an item's units (its orders, its conditions) change together, so they are not the independent
    pairs McNemar's test assumes. With the runs exchangeable within each item (the null: the same judge,
    twice), each item's difference is as likely negated, so the statistic sum(b_i - c_i) is tested
    against all its sign flips (the item-level permutation test; Durkalski et al. 2003's clustered
    McNemar is its normal approximation, the statistic over sqrt(sum (b_i - c_i)^2)). Exact: the
    distribution of the flips is convolved per distinct |b_i - c_i|; with one unit per item it is the
    exact McNemar test. 1.0 when no item is discordant."""
    from scipy import stats as sps

    size = np.abs(np.asarray(diffs, dtype=np.int64))
    size = size[size > 0]
    total, observed = int(size.sum()), abs(int(np.asarray(diffs, dtype=np.int64).sum()))
    if total == 0 or observed == 0:
        return 1.0
    if total > EXACT_DISCORDANCE:
        z = observed / math.sqrt(float(np.sum(size.astype(np.float64) ** 2)))
        return float(min(1.0, 2 * sps.norm.sf(z)))
    pmf = np.ones(1)  # over sum(s_i |d_i|) + total, s_i = +-1 (even steps only)
    for value, count in zip(*np.unique(size, return_counts=True), strict=True):
        step = np.zeros(2 * int(value) * int(count) + 1)
        step[:: 2 * int(value)] = sps.binom.pmf(np.arange(int(count) + 1), int(count), 0.5)
        pmf = np.convolve(pmf, step)
    upper = float(pmf[total + observed :].sum())  # P(T >= |t|); the flips are symmetric
    return min(1.0, 2 * upper)


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
    moves = Counter(f"{x}->{y}" for x, y in zip(va[changed].tolist(), vb[changed].tolist(), strict=True))
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
        per_item = (
            pd.Series(right_a.astype(np.int64) - right_b.astype(np.int64))
            .groupby(gold["item_id"].to_numpy(dtype=object))
            .sum()
        )
        row.discordant_items = int((per_item != 0).sum())
        row.mcnemar_p = clustered_mcnemar(per_item.to_numpy())
        row.mcnemar_p_units = exact_mcnemar(
            int((right_a & right_b).sum()), b, c, int((~right_a & ~right_b).sum())
        )
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


def _who(row: Drift) -> str:
    return row.judge_a if row.judge_a == row.judge_b else f"{row.judge_a} -> {row.judge_b}"


def _no_evidence(row: Drift, gate: GateSettings) -> list[str]:
    """A gated row with units but nothing to test fails: a run whose every call failed (or that has no
    gold label, for the McNemar gate) shows no change because it shows nothing, and must not pass."""
    reasons = []
    where = f"{_who(row)} {row.condition}"
    if not row.compared:
        why = f"none of its {row.units} unit(s) has a verdict in both runs ({row.missing} missing)"
        if gate.flip_rate is not None:
            row.gate_flip = "no evidence"
        if gate.mcnemar_alpha is not None:
            row.gate_mcnemar = "no evidence"
        return [f"{where}: no evidence: 0 compared, {why}"]
    if gate.mcnemar_alpha is not None and row.mcnemar_p is None:
        row.gate_mcnemar = "no evidence"
        reasons.append(
            f"{where}: no evidence for --gate-mcnemar: none of its {row.compared} compared unit(s) has a "
            "gold label, so a change in accuracy cannot be tested"
        )
    return reasons


def apply_gate(rows: list[Drift], gate: GateSettings, confidence: float) -> list[str]:
    """Mark every gated row (pairs: each condition and the pooled row; tie-probes are reported, not
    gated) and return the reasons the gate fails, one line each (empty: it passes). The McNemar gate
    reads the item-clustered p (`clustered_mcnemar`), Benjamini-Hochberg-adjusted over the gated rows,
    always, so the file has it either way. A row with units and nothing compared fails ("no
    evidence")."""
    gated = [r for r in rows if r.kind == "pair" and r.units]
    tested = [r for r in gated if r.mcnemar_p is not None]
    for row, adjusted in zip(tested, bh_adjust([r.mcnemar_p or 1.0 for r in tested]), strict=True):
        row.mcnemar_p_adjusted = float(adjusted)
    reasons: list[str] = []
    gating = gate.flip_rate is not None or gate.mcnemar_alpha is not None
    for row in gated:
        who = _who(row)
        if gating:
            reasons += _no_evidence(row, gate)
        if gate.flip_rate is not None and row.compared:
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
                    f"({row.right_to_wrong} right -> wrong, {row.wrong_to_right} wrong -> right, over "
                    f"{row.discordant_items} item(s)), item-clustered McNemar p = "
                    f"{row.mcnemar_p_adjusted:.2g} (adjusted) is below {gate.mcnemar_alpha}"
                )
    return reasons
