"""Self-preference (issue 31): does a judge favour answers written by its own family's models?

Only items where exactly one of the two answers is own-family say anything, and the gold side must be
held fixed: a good judge "wins" often for a strong family simply because that family's answers are
usually the chosen ones. So the items split by whether the own-family answer is the gold one, and the
measure is the judge's accuracy on the first group minus its accuracy on the second (`excess`,
records/self_preference_report.py). A judge indifferent to authorship has the same accuracy in both (excess
0, whatever its accuracy, ties or position bias); one that picks its own family's answer with
probability s, and otherwise judges as before, has excess s.

The unit is the item (its two orders are one judgment of it, averaged; a tie counts half), and the
interval is a studentized permutation interval: the test of "excess = d" permutes the group labels of
the scores shifted by d, with the Welch statistic (valid under unequal variances, exact under
exchangeability), and the interval is every d it does not reject. The test at d = 0 gives p_value,
and the flag is that test: p_value < 1 - confidence with a positive excess; the interval is made to
agree with it (it holds 0 exactly when p_value is at or above the level).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgebench.records.family_names import FamilyTable
from judgebench.records.self_preference_report import NO_MODEL_NAMES, SelfPreferenceReport, SelfPreferenceRow

FloatArray = npt.NDArray[np.float64]

PERMUTATIONS = 2000
GRID_STEP = 0.0005  # the interval's resolution (bisection on [-1, 1])
_CELLS = 4_000_000  # floats per block of permutations x items (or grid points x permutations)
READABLE = ("1", "2", "tie")


def item_scores(
    frame: pd.DataFrame, own_side: Mapping[str, str]
) -> tuple[FloatArray, npt.NDArray[np.bool_], int]:
    """Per item: the judge's correctness (own-family win share if the own answer is gold, one minus it
    otherwise) and whether the own answer is gold; and the readable verdicts counted. `frame` holds one
    judge's pair calls in one condition; `own_side` maps an item to its own-family output ("1"/"2")."""
    calls = frame[frame["verdict"].isin(READABLE) & frame["item_id"].isin(own_side.keys())]
    if calls.empty:
        return np.zeros(0), np.zeros(0, dtype=bool), 0
    side = calls["item_id"].map(own_side)
    won = (calls["verdict"] == side).astype(float) + 0.5 * (calls["verdict"] == "tie")
    # the label column is 1/2 as int, float or text, depending on the reader: compared as "1"/"2"
    gold = pd.to_numeric(calls["label"], errors="coerce").fillna(0).astype(int).astype(str)
    per_item = pd.DataFrame({"item_id": calls["item_id"], "won": won, "gold": gold})
    per_item["own_gold"] = per_item["gold"] == per_item["item_id"].map(own_side)
    grouped = per_item.groupby("item_id", sort=True).agg(won=("won", "mean"), own_gold=("own_gold", "first"))
    own_gold = grouped["own_gold"].to_numpy(dtype=bool)
    won_share = grouped["won"].to_numpy(dtype=np.float64)
    return np.where(own_gold, won_share, 1.0 - won_share), own_gold, len(calls)


def _welch(
    group1: tuple[FloatArray, FloatArray], group0: tuple[FloatArray, FloatArray], n1: int, n0: int
) -> FloatArray:
    """The Welch statistic from each group's (sum, sum of squares); +-inf where the spread is 0."""
    (sum1, sq1), (sum0, sq0) = group1, group0
    m1, m0 = sum1 / n1, sum0 / n0
    v1 = np.clip((sq1 - n1 * m1 * m1) / (n1 - 1), 0.0, None)
    v0 = np.clip((sq0 - n0 * m0 * m0) / (n0 - 1), 0.0, None)
    se = np.sqrt(v1 / n1 + v0 / n0)
    diff = m1 - m0
    tiny = 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > tiny, diff / np.where(se > tiny, se, 1.0), np.sign(np.round(diff, 12)) * np.inf)
    return np.asarray(np.nan_to_num(t, nan=0.0), dtype=np.float64)


def permutation_interval(
    scores: FloatArray, group: npt.NDArray[np.bool_], *, confidence: float, permutations: int, seed: int
) -> tuple[float, float, float]:
    """(low, high, p at 0) for mean(scores | group) - mean(scores | not group): the shifts d whose
    studentized permutation test keeps them at level 1 - confidence. Needs 2 items in each group."""
    y = np.asarray(scores, dtype=np.float64)
    g = np.asarray(group, dtype=np.float64)
    n, n1 = len(y), int(g.sum())
    n0 = n - n1
    rng = np.random.default_rng(seed)
    # per permutation, the group-1 sums that make the statistic of any shift d (z = y - d g)
    parts: list[FloatArray] = []
    block = max(1, _CELLS // max(n, 1))
    for start in range(0, permutations, block):
        labels = rng.permuted(np.tile(g, (min(block, permutations - start), 1)), axis=1)
        parts.append(labels @ np.stack([y, g, y * y, y * g], axis=1))
    perm = np.concatenate(parts, axis=0)  # permutations x 4: sum y, sum g, sum y^2, sum y g
    observed = np.array([[y @ g, g @ g, (y * y) @ g, (y * g) @ g]])
    totals = np.array([y.sum(), g.sum(), (y * y).sum(), (y * g).sum()])

    def statistic(sums: FloatArray, d: FloatArray) -> FloatArray:
        """Welch t of y - d g for each row of sums (axis 0) and each shift (axis 1)."""
        sy, sg, syy, syg = (sums[:, i : i + 1] for i in range(4))
        dd = d[None, :]
        sum1 = sy - dd * sg
        sq1 = syy - 2 * dd * syg + dd * dd * sg
        sum0 = (totals[0] - dd * totals[1]) - sum1
        sq0 = (totals[2] - 2 * dd * totals[3] + dd * dd * totals[1]) - sq1
        return _welch((sum1, sq1), (sum0, sq0), n1, n0)

    def p_values(d: FloatArray) -> FloatArray:
        t_obs = np.abs(statistic(observed, d))[0]
        out = np.empty(len(d))
        step = max(1, _CELLS // permutations)
        for start in range(0, len(d), step):
            part = d[start : start + step]
            t_perm = np.abs(statistic(perm, part))
            out[start : start + step] = (1 + (t_perm >= t_obs[start : start + step] - 1e-9).sum(axis=0)) / (
                permutations + 1
            )
        return out

    alpha = 1.0 - confidence

    def kept(d: float) -> bool:
        return bool(p_values(np.array([d]))[0] >= alpha)

    def bound(inside: float, outside: float) -> float:
        """Bisection between a kept shift and a rejected one, to GRID_STEP (the p-value falls away
        from the estimate on each side)."""
        if kept(outside):
            return outside
        while abs(outside - inside) > GRID_STEP:
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if kept(middle) else (inside, middle)
        return inside

    estimate = float(y[g > 0].mean() - y[g == 0].mean())
    p_zero = float(p_values(np.zeros(1))[0])
    low, high = bound(estimate, -1.0), bound(estimate, 1.0)
    # the interval must agree with the test at 0 it reports: with discrete scores, ties at d = 0 (all
    # counted) break at any d != 0, so the p-value jumps there and bisection can step past 0 either way
    if p_zero >= alpha:  # 0 is kept: it is in the confidence set, so in the interval
        low, high = min(low, 0.0), max(high, 0.0)
    elif estimate > 0.0 and low <= 0.0:  # 0 is rejected: the interval stays on the estimate's side
        low = bound(estimate, 0.0)
    elif estimate < 0.0 and high >= 0.0:
        high = bound(estimate, 0.0)
    return low, high, p_zero


def _own_sides(
    item_models: Mapping[str, tuple[str | None, str | None]], table: FamilyTable, family: str
) -> dict[str, str]:
    """Items with exactly one own-family answer -> that answer's output number."""
    sides: dict[str, str] = {}
    for item_id, (model_1, model_2) in item_models.items():
        if model_1 is None or model_2 is None:
            continue
        own_1, own_2 = table.of_model(model_1) == family, table.of_model(model_2) == family
        if own_1 != own_2:
            sides[item_id] = "1" if own_1 else "2"
    return sides


def _labelled(frame: pd.DataFrame, sides: Mapping[str, str]) -> bool:
    """Whether the items of `sides` carry gold labels (1/2) in the judgments."""
    calls = frame[frame["item_id"].isin(sides.keys())]
    return bool(pd.to_numeric(calls["label"], errors="coerce").isin([1, 2]).any())


def _row(
    frame: pd.DataFrame,
    judge: str,
    family: str,
    condition: str,
    sides: Mapping[str, str],
    *,
    confidence: float,
    permutations: int,
    seed: int,
) -> SelfPreferenceRow:
    scores, own_gold, calls = item_scores(frame, sides)
    n1, n0 = int(own_gold.sum()), int((~own_gold).sum())
    row = SelfPreferenceRow(
        judge=judge,
        family=family,
        condition=condition,
        items=len(scores),
        own_chosen=n1,
        own_rejected=n0,
        calls=calls,
        confidence=confidence,
    )
    if len(scores) == 0:
        row.note = f"no item has exactly one {family} answer with a readable verdict"
        return row
    won = np.where(own_gold, scores, 1.0 - scores)
    row.own_win_rate = float(won.mean())
    if not _labelled(frame, sides):  # an imported log without gold: the own-family win rate only
        row.own_chosen = row.own_rejected = 0
        row.note = "no gold labels: the own-family win rate only (the excess needs the gold side fixed)"
        return row
    row.own_win_when_chosen = float(won[own_gold].mean()) if n1 else None
    row.own_win_when_rejected = float(won[~own_gold].mean()) if n0 else None
    if n1 < 2 or n0 < 2:
        row.note = (
            f"too few items to hold gold fixed: the {family} answer is the gold one in {n1}, "
            f"the other answer in {n0} (2 of each needed)"
        )
        return row
    row.excess = float(scores[own_gold].mean() - scores[~own_gold].mean())
    row.low, row.high, row.p_value = permutation_interval(
        scores, own_gold, confidence=confidence, permutations=permutations, seed=seed
    )
    row.permutations = permutations
    # defined by the test it reports: p below the level, own family favoured (then low > 0 too)
    row.flagged = row.p_value < 1.0 - confidence and row.excess > 0.0
    return row


@dataclass(frozen=True)
class SelfPreferenceInputs:
    """What the check needs beyond the judgments: each item's two answers' models, each judge's
    family (None: unknown) and the family table that maps a model to its family."""

    item_models: Mapping[str, tuple[str | None, str | None]]
    families: Mapping[str, str | None]
    table: FamilyTable


def self_preference(
    frame: pd.DataFrame,
    item_models: Mapping[str, tuple[str | None, str | None]],
    judge_families: Mapping[str, str | None],
    table: FamilyTable,
    *,
    conditions: Sequence[str],
    confidence: float = 0.95,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> SelfPreferenceReport:
    """The self-preference check of every judge in every condition named. `item_models`: each
    labelled item's models behind output_1 and output_2 (records.families.answer_models);
    `judge_families`: each judge's family (None: unknown)."""
    named = {item: models for item, models in item_models.items() if None not in models}
    families: dict[str, int] = {}
    for models in named.values():
        for model in models:
            name = table.of_model(model) or "other"
            families[name] = families.get(name, 0) + 1
    report = SelfPreferenceReport(
        items=len(item_models), named_items=len(named), answer_families=dict(sorted(families.items()))
    )
    if not named:
        report.note = NO_MODEL_NAMES
        return report
    pairs = frame[frame["kind"] == "pair"]
    for judge, by_judge in pairs.groupby("judge", sort=True):
        family = judge_families.get(str(judge))
        for condition in conditions:
            cells = by_judge[by_judge["condition"] == condition]
            if cells.empty:
                continue
            if family is None:
                report.rows.append(
                    SelfPreferenceRow(
                        judge=str(judge),
                        family=None,
                        condition=condition,
                        confidence=confidence,
                        note="the judge's model family is unknown (configs/model_families.toml)",
                    )
                )
                continue
            sides = _own_sides(named, table, family)
            report.rows.append(
                _row(
                    cells,
                    str(judge),
                    family,
                    condition,
                    sides,
                    confidence=confidence,
                    permutations=permutations,
                    seed=seed,
                )
            )
    return report
