"""Inputs of a calibration: one judge's base scores per unit and its (unit, neighbour) scores, and the
Judge-LS run as such sets (tables and arena folders: `tables.py`).

Three sources, all normalised by the declared scale (never the observed range):
- a Judge-LS run (`judgments.jsonl`): each judge is a system, units are (item, order) in `en`, the unit
  score is P(output_1 preferred) (1 / 0.5 / 0 from the verdict, or from the verdict-token probabilities),
  neighbours are the same (item, order) in every other condition and the same item in the other order;
- a generic scores table (CSV, TSV or JSONL with columns system, unit, context, score, plus optional
  numeric factor columns): context `base` is the scored unit (repeated `base` rows measure jitter), any
  other context is a neighbour of that name;
- an arena-hard-auto judgment folder (one JSONL per model, each record with two games).
Invalid or missing neighbour scores are counted per neighbour kind and reported, never dropped silently.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgebench.errors import InputError
from judgebench.records import UnitKey
from judgebench.store.judgment_table import read_judgment_table
from judgebench.store.run_folder import JUDGMENTS, RunDir

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
UnitScoreMode = Literal["auto", "verdict", "prob"]
InvalidPolicy = Literal["skip", "worst"]


@dataclass
class ScoreSet:
    """One calibration's data, normalised to [0, 1].

    `gold` (Judge-LS only) is 1.0 where output_1 is the labelled winner and 0.0 where output_2 is, so a
    unit's correctness is s or 1 - s and the system aggregate is tie-half accuracy.
    """

    name: str
    scale: tuple[float, float]
    systems: list[str]
    units: list[str]
    base: FloatArray
    pair_unit: IntArray
    pair_score: FloatArray
    pair_kind: list[str]
    invalid_neighbours: dict[str, int] = field(default_factory=dict)
    units_dropped: dict[str, int] = field(default_factory=dict)
    repeat_unit: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    repeat_score: FloatArray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    gold: FloatArray | None = None
    aggregate: Literal["accuracy", "mean"] = "mean"
    score_source: str = "verdict"
    invalid_unit_index: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    invalid_kind: list[str] = field(default_factory=list)
    # the noise dimension the source fixes (Judge-LS: 2 x items, PROTOCOL §5); None: the unit count
    declared_d: int | None = None
    # units that are not independent share a group (Judge-LS: the two orders of one item share their
    # swap pair; tables and arena folders: the systems' rows of one question); the bound, the
    # certificate and the holdout split work per group. None: every unit is its own group.
    group_index: IntArray | None = None
    # Judge-LS: the (item, order) of each unit, by index (empty for tables and arena folders)
    unit_keys: list[UnitKey] = field(default_factory=list)

    def groups(self) -> IntArray:
        """The group of each unit (its own index when the source declares none)."""
        if self.group_index is None:
            return np.arange(len(self.units), dtype=np.int64)
        return self.group_index

    def __len__(self) -> int:
        return len(self.units)

    def denormalise(self, values: FloatArray) -> FloatArray:
        lo, hi = self.scale
        return np.asarray(lo + values * (hi - lo), dtype=np.float64)

    def subset_pairs(self, unit_mask: NDArray[np.bool_]) -> ScoreSet:
        """The same set with only the pairs (and invalid counts) of units in `unit_mask` (for holdouts)."""
        return self._filter_pairs(unit_mask[self.pair_unit], unit_mask[self.invalid_unit_index])

    def only_kinds(self, kinds: set[str]) -> ScoreSet:
        """The same set with only neighbours of the given kinds (one bias setting)."""
        keep = np.array([k in kinds for k in self.pair_kind], dtype=bool)
        keep_invalid = np.array([k in kinds for k in self.invalid_kind], dtype=bool)
        return self._filter_pairs(keep, keep_invalid)

    def add_pairs(self, unit: list[int], kind: list[str], score: list[float | None]) -> ScoreSet:
        """A copy with more (unit, neighbour) pairs; None scores are counted as invalid neighbours."""
        ok = [i for i, s in enumerate(score) if s is not None]
        bad = [i for i, s in enumerate(score) if s is None]
        invalid = Counter(self.invalid_neighbours)
        invalid.update(kind[i] for i in bad)
        return replace(
            self,
            pair_unit=np.concatenate([self.pair_unit, np.asarray([unit[i] for i in ok], dtype=np.int64)]),
            pair_score=np.concatenate(
                [self.pair_score, np.asarray([score[i] for i in ok], dtype=np.float64)]
            ),
            pair_kind=[*self.pair_kind, *(kind[i] for i in ok)],
            invalid_neighbours=dict(invalid),
            invalid_unit_index=np.concatenate(
                [self.invalid_unit_index, np.asarray([unit[i] for i in bad], dtype=np.int64)]
            ),
            invalid_kind=[*self.invalid_kind, *(kind[i] for i in bad)],
        )

    def _filter_pairs(self, keep: NDArray[np.bool_], keep_invalid: NDArray[np.bool_]) -> ScoreSet:
        invalid = Counter(k for k, m in zip(self.invalid_kind, keep_invalid, strict=True) if m)
        return replace(
            self,
            pair_unit=self.pair_unit[keep],
            pair_score=self.pair_score[keep],
            pair_kind=[k for k, m in zip(self.pair_kind, keep, strict=True) if m],
            invalid_neighbours=dict(invalid),
            invalid_unit_index=self.invalid_unit_index[keep_invalid],
            invalid_kind=[k for k, m in zip(self.invalid_kind, keep_invalid, strict=True) if m],
        )

    def with_invalid_as_worst(self) -> ScoreSet:
        """Count each invalid/missing neighbour as the largest change its unit allows (conservative)."""
        if len(self.invalid_unit_index) == 0:
            return self
        worst = np.where(self.base[self.invalid_unit_index] >= 0.5, 0.0, 1.0)
        return replace(
            self,
            pair_unit=np.concatenate([self.pair_unit, self.invalid_unit_index]),
            pair_score=np.concatenate([self.pair_score, worst]),
            pair_kind=[*self.pair_kind, *(f"{k}(invalid)" for k in self.invalid_kind)],
        )


class ScoreSetBuilder:
    """Accumulates units, pairs and invalid neighbours, then freezes into a ScoreSet."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], int] = {}
        self.systems: list[str] = []
        self.units: list[str] = []
        self.base: list[float] = []
        self.gold: list[float] = []
        self.pair_unit: list[int] = []
        self.pair_score: list[float] = []
        self.pair_kind: list[str] = []
        self.invalid_unit: list[int] = []
        self.invalid_kind: list[str] = []
        self.repeat_unit: list[int] = []
        self.repeat_score: list[float] = []
        self.group_ids: dict[str, int] = {}
        self.group_of: list[int] = []
        self.unit_keys: list[UnitKey] = []

    def add_unit(
        self,
        system: str,
        unit: str,
        score: float,
        gold: float | None = None,
        *,
        group: str | None = None,
        unit_key: UnitKey | None = None,
    ) -> int:
        idx = len(self.units)
        self.index[(system, unit)] = idx
        self.systems.append(system)
        self.units.append(unit)
        self.base.append(score)
        if gold is not None:
            self.gold.append(gold)
        group_key = group if group is not None else f"\x00unit{idx}"
        self.group_of.append(self.group_ids.setdefault(group_key, len(self.group_ids)))
        if unit_key is not None:
            self.unit_keys.append(unit_key)
        return idx

    def add_pair(self, idx: int, kind: str, score: float | None) -> None:
        if score is None or not math.isfinite(score):
            self.invalid_unit.append(idx)
            self.invalid_kind.append(kind)
        else:
            self.pair_unit.append(idx)
            self.pair_score.append(score)
            self.pair_kind.append(kind)

    def build(
        self,
        name: str,
        scale: tuple[float, float],
        *,
        aggregate: Literal["accuracy", "mean"],
        score_source: str,
        units_dropped: dict[str, int] | None = None,
        declared_d: int | None = None,
    ) -> ScoreSet:
        gold = np.asarray(self.gold, dtype=np.float64) if self.gold else None
        return ScoreSet(
            name=name,
            scale=scale,
            systems=self.systems,
            units=self.units,
            base=np.asarray(self.base, dtype=np.float64),
            pair_unit=np.asarray(self.pair_unit, dtype=np.int64),
            pair_score=np.asarray(self.pair_score, dtype=np.float64),
            pair_kind=self.pair_kind,
            invalid_neighbours=dict(Counter(self.invalid_kind)),
            repeat_unit=np.asarray(self.repeat_unit, dtype=np.int64),
            repeat_score=np.asarray(self.repeat_score, dtype=np.float64),
            gold=gold,
            invalid_unit_index=np.asarray(self.invalid_unit, dtype=np.int64),
            invalid_kind=self.invalid_kind,
            group_index=np.asarray(self.group_of, dtype=np.int64),
            unit_keys=self.unit_keys,
            aggregate=aggregate,
            score_source=score_source,
            units_dropped=units_dropped or {},
            declared_d=declared_d,
        )


# --- Judge-LS runs --------------------------------------------------------------------------------


class Scorable(Protocol):
    """What a pair judgment is scored from: a `Judgment`, or a row of the run's judgment table."""

    @property
    def verdict(self) -> str | None: ...
    @property
    def label(self) -> int | None: ...
    @property
    def order(self) -> str: ...
    @property
    def prob_a(self) -> float | None: ...
    @property
    def prob_b(self) -> float | None: ...
    @property
    def prob_tie(self) -> float | None: ...


class _Row(NamedTuple):
    """One pair judgment of the run's table, with just what scoring reads."""

    verdict: str | None
    label: int | None
    order: str
    prob_a: float | None
    prob_b: float | None
    prob_tie: float | None


def _has_probs(j: Scorable) -> bool:
    return j.prob_a is not None and j.prob_b is not None


def unit_score(j: Scorable, *, use_probs: bool) -> float | None:
    """P(output_1 preferred) of one pair judgment; None when the call failed or the answer is invalid.

    With probabilities: E[score] = (P(output_1) + 0.5 P(Tie)) / (P(A) + P(B) + P(Tie)), where
    P(output_1) = prob_a in orig order and prob_b in swap order (a missing prob_tie counts as 0): the
    verdict-token probabilities renormalised over the three admissible answers.
    """
    if j.verdict not in ("1", "2", "tie"):
        return None
    if use_probs and _has_probs(j):
        pa, pb, pt = float(j.prob_a or 0.0), float(j.prob_b or 0.0), float(j.prob_tie or 0.0)
        total = pa + pb + pt
        if total > 0:
            p1 = pa if j.order == "orig" else pb
            return (p1 + 0.5 * pt) / total
    return {"1": 1.0, "2": 0.0, "tie": 0.5}[j.verdict]


OTHER_ORDER = {"orig": "swap", "swap": "orig"}


class LoadedRun(NamedTuple):
    """The judges of a run that can be calibrated, and why the others cannot."""

    sets: list[ScoreSet]
    skipped: dict[str, str]


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counter.items())) or "no en judgment"


def _use_probs(judge: str, valid: list[Scorable], mode: UnitScoreMode) -> bool:
    if mode == "prob":
        if not any(_has_probs(j) for j in valid):
            raise InputError(f"judge '{judge}' stored no verdict probabilities (prob_a/prob_b)")
        return True
    if mode == "auto":
        return bool(valid) and all(_has_probs(j) for j in valid)
    return False


JudgeTable = dict[tuple[str, str, str], Scorable]  # (item, condition, order) -> last judgment


def _judge_set(judge: str, table: JudgeTable, mode: UnitScoreMode, base_condition: str) -> ScoreSet | str:
    """One judge's ScoreSet, or why it has no scorable unit."""
    conditions = sorted({c for (_, c, _) in table} - {base_condition})
    use_probs = _use_probs(judge, [j for j in table.values() if j.verdict in ("1", "2", "tie")], mode)
    builder = ScoreSetBuilder()
    dropped: Counter[str] = Counter()
    for item_id, order in sorted((i, o) for (i, c, o) in table if c == base_condition):
        j = table[(item_id, base_condition, order)]
        if j.label not in (1, 2):
            dropped["no_label"] += 1
            continue
        score = unit_score(j, use_probs=use_probs)
        if score is None:  # a missing call is left out; an invalid answer is wrong in the aggregate
            dropped["missing" if j.verdict is None else "invalid"] += 1
            continue
        gold = 1.0 if j.label == 1 else 0.0
        key = UnitKey(item_id, order)
        idx = builder.add_unit(judge, f"{item_id}|{order}", score, gold, group=item_id, unit_key=key)
        for cond in conditions:
            nb = table.get((item_id, cond, order))
            builder.add_pair(idx, cond, None if nb is None else unit_score(nb, use_probs=use_probs))
        other = table.get((item_id, base_condition, OTHER_ORDER.get(order, "")))
        builder.add_pair(idx, "swap", None if other is None else unit_score(other, use_probs=use_probs))
    if not builder.units:
        return (
            f"no valid '{base_condition}' pair verdict with a label ({_counts(dropped)}): nothing to "
            "calibrate" + ("; its accuracy is 0 where it answered" if dropped["invalid"] else "")
        )
    labelled_items = {i for (i, c, _), j in table.items() if c == base_condition and j.label in (1, 2)}
    return builder.build(
        judge,
        (0.0, 1.0),
        aggregate="accuracy",
        score_source="probabilities" if use_probs else "verdict",
        units_dropped=dict(dropped),
        declared_d=2 * len(labelled_items),
    )


def _nan_none(x: float) -> float | None:
    return None if x != x else x  # NaN: not stored


def _pair_tables(frame: pd.DataFrame) -> dict[str, JudgeTable]:
    """Each judge's pair judgments by (item, condition, order), from the run's columns (no record
    objects: a million-judgment run is a few hundred MB here, not several GB)."""
    pairs = frame[frame["kind"] == "pair"]
    names = ("judge", "item_id", "condition", "order", "verdict_raw", "label", "prob_a", "prob_b", "prob_tie")
    by_judge: dict[str, JudgeTable] = {}
    for judge, item, cond, order, verdict, label, p_a, p_b, p_tie in zip(
        *(pairs[name].tolist() for name in names), strict=True
    ):
        row = _Row(
            verdict if isinstance(verdict, str) else None,
            None if label != label else int(label),
            order,
            _nan_none(p_a),
            _nan_none(p_b),
            _nan_none(p_tie),
        )
        by_judge.setdefault(judge, {})[(item, cond, order)] = row
    return by_judge


def load_run(
    run: RunDir | Path,
    *,
    mode: UnitScoreMode = "auto",
    base_condition: str = "en",
    judges: list[str] | None = None,
) -> LoadedRun:
    """One ScoreSet per judge of a Judge-LS run (last line per call key; pair judgments only). A judge
    with no scorable en unit (every answer invalid or missing) is skipped with its reason, so that
    one broken judge does not stop the others; with none scorable, it is an error."""
    path = (run if isinstance(run, RunDir) else RunDir(run)).file(JUDGMENTS)
    if not path.exists():
        raise InputError("no judgments.jsonl: run `judgebench judge` on this run first", path=str(path))
    by_judge = _pair_tables(read_judgment_table(path).frame)
    if not by_judge:
        raise InputError("no pair judgments in the run", path=str(path))
    sets: list[ScoreSet] = []
    skipped: dict[str, str] = {}
    for judge in sorted(by_judge) if judges is None else judges:
        if judge not in by_judge:
            raise InputError(f"judge '{judge}' has no pair judgments in the run", path=str(path))
        table = by_judge[judge]
        if not any(c == base_condition for (_, c, _) in table):
            raise InputError(f"judge '{judge}' has no '{base_condition}' pair judgments", path=str(path))
        built = _judge_set(judge, table, mode, base_condition)
        if isinstance(built, str):
            skipped[judge] = built
        else:
            sets.append(built)
    if not sets:
        reasons = "; ".join(f"{judge}: {why}" for judge, why in skipped.items())
        raise InputError(f"no judge can be calibrated ({reasons})", path=str(path))
    return LoadedRun(sets, skipped)
