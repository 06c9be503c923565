"""Inputs of a calibration: one judge's base scores per unit and its (unit, neighbour) scores.

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

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgebench.errors import InputError
from judgebench.records import Judgment
from judgebench.rundir import JUDGMENTS, last_per_key, read_jsonl

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
    # swap pair); the bound and the holdout split work per group. None: every unit is its own group.
    group_index: IntArray | None = None

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
        return ScoreSet(
            **{
                **self.__dict__,
                "pair_unit": np.concatenate(
                    [self.pair_unit, np.asarray([unit[i] for i in ok], dtype=np.int64)]
                ),
                "pair_score": np.concatenate(
                    [self.pair_score, np.asarray([score[i] for i in ok], dtype=np.float64)]
                ),
                "pair_kind": [*self.pair_kind, *(kind[i] for i in ok)],
                "invalid_neighbours": dict(invalid),
                "invalid_unit_index": np.concatenate(
                    [self.invalid_unit_index, np.asarray([unit[i] for i in bad], dtype=np.int64)]
                ),
                "invalid_kind": [*self.invalid_kind, *(kind[i] for i in bad)],
            }
        )

    def _filter_pairs(self, keep: NDArray[np.bool_], keep_invalid: NDArray[np.bool_]) -> ScoreSet:
        invalid = Counter(k for k, m in zip(self.invalid_kind, keep_invalid, strict=True) if m)
        return ScoreSet(
            name=self.name,
            scale=self.scale,
            systems=self.systems,
            units=self.units,
            base=self.base,
            pair_unit=self.pair_unit[keep],
            pair_score=self.pair_score[keep],
            pair_kind=[k for k, m in zip(self.pair_kind, keep, strict=True) if m],
            invalid_neighbours=dict(invalid),
            units_dropped=self.units_dropped,
            repeat_unit=self.repeat_unit,
            repeat_score=self.repeat_score,
            gold=self.gold,
            aggregate=self.aggregate,
            score_source=self.score_source,
            invalid_unit_index=self.invalid_unit_index[keep_invalid],
            invalid_kind=[k for k, m in zip(self.invalid_kind, keep_invalid, strict=True) if m],
            declared_d=self.declared_d,
            group_index=self.group_index,
        )

    def with_invalid_as_worst(self) -> ScoreSet:
        """Count each invalid/missing neighbour as the largest change its unit allows (conservative)."""
        if len(self.invalid_unit_index) == 0:
            return self
        worst = np.where(self.base[self.invalid_unit_index] >= 0.5, 0.0, 1.0)
        return ScoreSet(
            **{
                **self.__dict__,
                "pair_unit": np.concatenate([self.pair_unit, self.invalid_unit_index]),
                "pair_score": np.concatenate([self.pair_score, worst]),
                "pair_kind": [*self.pair_kind, *(f"{k}(invalid)" for k in self.invalid_kind)],
            }
        )


class _Builder:
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

    def add_unit(
        self, system: str, unit: str, score: float, gold: float | None = None, *, group: str | None = None
    ) -> int:
        idx = len(self.units)
        self.index[(system, unit)] = idx
        self.systems.append(system)
        self.units.append(unit)
        self.base.append(score)
        if gold is not None:
            self.gold.append(gold)
        key = group if group is not None else f"\x00unit{idx}"
        self.group_of.append(self.group_ids.setdefault(key, len(self.group_ids)))
        return idx

    def add_pair(self, idx: int, kind: str, score: float | None) -> None:
        if score is None or not math.isfinite(score):
            self.invalid_unit.append(idx)
            self.invalid_kind.append(kind)
        else:
            self.pair_unit.append(idx)
            self.pair_score.append(score)
            self.pair_kind.append(kind)

    def build(self, name: str, scale: tuple[float, float], **extra: object) -> ScoreSet:
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
            **extra,  # type: ignore[arg-type]
        )


# --- Judge-LS runs --------------------------------------------------------------------------------


def _has_probs(j: Judgment) -> bool:
    return j.prob_a is not None and j.prob_b is not None


def unit_score(j: Judgment, *, use_probs: bool) -> float | None:
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


def load_run(
    run: Path, *, mode: UnitScoreMode = "auto", base_condition: str = "en", judges: list[str] | None = None
) -> LoadedRun:
    """One ScoreSet per judge of a Judge-LS run (last line per call key; pair judgments only). A judge
    with no scorable en unit (every answer invalid or missing) is skipped with its reason, so that
    one broken judge does not stop the others; with none scorable, it is an error."""
    path = run / JUDGMENTS
    if not path.exists():
        raise InputError("no judgments.jsonl: run `judgebench judge` on this run first", path=str(path))
    latest = last_per_key(read_jsonl(path, Judgment), key=lambda j: j.call_key())
    pairs = [j for j in latest.values() if j.kind == "pair"]
    if not pairs:
        raise InputError("no pair judgments in the run", path=str(path))
    by_judge: dict[str, dict[tuple[str, str, str], Judgment]] = {}
    for j in pairs:
        by_judge.setdefault(j.judge, {})[(j.item_id, j.condition, j.order)] = j
    names = sorted(by_judge) if judges is None else judges
    sets: list[ScoreSet] = []
    skipped: dict[str, str] = {}
    for judge in names:
        if judge not in by_judge:
            raise InputError(f"judge '{judge}' has no pair judgments in the run", path=str(path))
        table = by_judge[judge]
        conditions = sorted({c for (_, c, _) in table} - {base_condition})
        valid = [j for j in table.values() if j.verdict in ("1", "2", "tie")]
        if mode == "prob":
            use_probs = True
            if not any(_has_probs(j) for j in valid):
                raise InputError(f"judge '{judge}' stored no verdict probabilities (prob_a/prob_b)")
        elif mode == "auto":
            use_probs = bool(valid) and all(_has_probs(j) for j in valid)
        else:
            use_probs = False
        builder = _Builder()
        dropped: Counter[str] = Counter()
        base_keys = sorted((i, o) for (i, c, o) in table if c == base_condition)
        if not base_keys:
            raise InputError(f"judge '{judge}' has no '{base_condition}' pair judgments", path=str(path))
        for item_id, order in base_keys:
            j = table[(item_id, base_condition, order)]
            if j.label not in (1, 2):
                dropped["no_label"] += 1
                continue
            score = unit_score(j, use_probs=use_probs)
            if score is None:  # a missing call is left out; an invalid answer is wrong in the aggregate
                dropped["missing" if j.verdict is None else "invalid"] += 1
                continue
            gold = 1.0 if j.label == 1 else 0.0
            idx = builder.add_unit(judge, f"{item_id}|{order}", score, gold, group=item_id)
            for cond in conditions:
                nb = table.get((item_id, cond, order))
                builder.add_pair(idx, cond, None if nb is None else unit_score(nb, use_probs=use_probs))
            other = table.get((item_id, base_condition, OTHER_ORDER.get(order, "")))
            builder.add_pair(idx, "swap", None if other is None else unit_score(other, use_probs=use_probs))
        if not builder.units:
            skipped[judge] = (
                f"no valid '{base_condition}' pair verdict with a label ({_counts(dropped)}): nothing to "
                "calibrate" + ("; its accuracy is 0 where it answered" if dropped["invalid"] else "")
            )
            continue
        labelled_items = {i for (i, c, _), j in table.items() if c == base_condition and j.label in (1, 2)}
        sets.append(
            builder.build(
                judge,
                (0.0, 1.0),
                aggregate="accuracy",
                score_source="probabilities" if use_probs else "verdict",
                units_dropped=dict(dropped),
                declared_d=2 * len(labelled_items),
            )
        )
    if not sets:
        reasons = "; ".join(f"{judge}: {why}" for judge, why in skipped.items())
        raise InputError(f"no judge can be calibrated ({reasons})", path=str(path))
    return LoadedRun(sets, skipped)


# --- generic tables -------------------------------------------------------------------------------

TABLE_COLUMNS = ("system", "unit", "context", "score")


def read_table(path: Path) -> pd.DataFrame:
    """CSV, TSV, JSONL/NDJSON or a JSON array of row objects."""
    if not path.exists():
        raise InputError("file not found", path=str(path))
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            frame = pd.read_json(path, lines=True, dtype=False)
        elif suffix == ".json":
            frame = pd.read_json(path, dtype=False)
        elif suffix == ".tsv":
            frame = pd.read_csv(path, sep="\t", dtype={"system": str, "unit": str, "context": str})
        else:
            frame = pd.read_csv(path, dtype={"system": str, "unit": str, "context": str})
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"unreadable table ({exc})", path=str(path)) from exc
    missing = [c for c in TABLE_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}; expected {', '.join(TABLE_COLUMNS)} (+ factor columns)",
            path=str(path),
        )
    for col in ("system", "unit", "context"):
        frame[col] = frame[col].astype(str)
    return frame


def factor_columns(frame: pd.DataFrame) -> list[str]:
    """Numeric columns other than the four required ones: the judge's factor (rubric) scores."""
    return [c for c in frame.columns if c not in TABLE_COLUMNS and pd.api.types.is_numeric_dtype(frame[c])]


def _normalise(
    value: object, scale: tuple[float, float], *, path: Path, row: int, column: str
) -> float | None:
    lo, hi = scale
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x):
        return None
    if x < lo - 1e-9 or x > hi + 1e-9:
        raise InputError(
            f"{x} lies outside the declared scale [{lo}, {hi}]", path=str(path), line=row, field=column
        )
    return (x - lo) / (hi - lo)


def scoreset_from_table(
    frame: pd.DataFrame, scale: tuple[float, float], *, name: str, column: str = "score", path: Path
) -> ScoreSet:
    """Build a ScoreSet from a table's `column` (the overall score or one factor).

    The first `base` row of a (system, unit) is its score; further `base` rows are repeats that measure
    jitter. A neighbour row whose score is empty or not a number is an invalid neighbour (counted).
    A table row number in messages counts the header as line 1.
    """
    lo, hi = scale
    if not hi > lo:
        raise InputError(f"--scale needs MIN < MAX, got {lo} {hi}")
    builder = _Builder()
    pending: list[tuple[tuple[str, str], str, float | None]] = []
    dropped: Counter[str] = Counter()
    for row_no, (system, unit, context, value) in enumerate(
        zip(frame["system"], frame["unit"], frame["context"], frame[column], strict=True), start=2
    ):
        score = _normalise(value, scale, path=path, row=row_no, column=column)
        key = (system, unit)
        if context == "base":
            if key in builder.index:
                if score is not None:
                    builder.repeat_unit.append(builder.index[key])
                    builder.repeat_score.append(score)
                continue
            if score is None:
                dropped["invalid_base"] += 1
                continue
            idx = builder.add_unit(system, unit, score)
            builder.repeat_unit.append(idx)
            builder.repeat_score.append(score)
        else:
            pending.append((key, context, score))
    orphans = 0
    for key, context, score in pending:
        idx_opt = builder.index.get(key)
        if idx_opt is None:
            orphans += 1
            continue
        builder.add_pair(idx_opt, context, score)
    if orphans:
        dropped["neighbour_without_base"] = orphans
    if not builder.units:
        raise InputError(f"no row with context 'base' and a numeric '{column}'", path=str(path))
    return builder.build(name, scale, aggregate="mean", score_source=column, units_dropped=dict(dropped))


# --- arena-hard-auto -------------------------------------------------------------------------------

ARENA_PATTERN = re.compile(r"\[\[([AB<>=]+)\]\]")
# game 1 shows the baseline as A and the model as B; game 2 swaps them. Likert is the model's score.
LIKERT_GAME1 = {"A>>B": 1, "A>B": 2, "A=B": 3, "B>A": 4, "B>>A": 5}
LIKERT_GAME2 = {"A>>B": 5, "A>B": 4, "A=B": 3, "B>A": 2, "B>>A": 1}
_EQUIV = {"B<<A": "A>>B", "B<A": "A>B", "B=A": "A=B", "A<B": "B>A", "A<<B": "B>>A"}


def arena_label(game: dict[str, object]) -> str | None:
    """The game's 5-way label: its `score`, else the single distinct [[...]] label in its judgment."""
    raw = game.get("score")
    if not isinstance(raw, str) or not raw.strip():
        text = game.get("judgment")
        if not isinstance(text, str):
            return None
        found = {m for m in ARENA_PATTERN.findall(text) if m}
        if len(found) != 1:
            return None
        raw = found.pop()
    label = raw.strip().strip("[]").strip()
    label = _EQUIV.get(label, label)
    return label if label in LIKERT_GAME1 else None


def load_arena_hard(folder: Path, *, baseline: str | None = None) -> ScoreSet:
    """arena-hard-auto `model_judgment/<judge>/` folder: Likert 1-5 per (model, question), PROTOCOL §5.

    A unit is (model, question); its score is game 1's verdict against the baseline (the baseline
    shown as A: A>>B = 1 ... B>>A = 5) and its neighbour is game 2, the same comparison in the swapped
    order, scored from the model's side so the two are comparable. When game 1 is unreadable, game 2
    scores the unit and its neighbour is counted invalid. Scale 1..5.
    """
    if not folder.is_dir():
        raise InputError("not a folder of arena-hard-auto judgment files (<model>.jsonl)", path=str(folder))
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise InputError("no *.jsonl judgment files", path=str(folder))
    builder = _Builder()
    judges: set[str] = set()
    games: dict[tuple[str, str], list[int | None]] = {}
    for file in files:
        with open(file, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    model = str(record.get("model") or file.stem)
                    qid = str(record["question_id"])
                    game_list = record["games"]
                except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                    raise InputError(
                        f"not an arena-hard-auto judgment record ({exc.__class__.__name__}: {exc})",
                        path=str(file),
                        line=line_no,
                    ) from exc
                if baseline is not None and model == baseline:
                    continue
                if record.get("judge"):
                    judges.add(str(record["judge"]))
                scores: list[int | None] = []
                for g, game in enumerate(game_list[:2]):
                    label = arena_label(game) if isinstance(game, dict) else None
                    table = LIKERT_GAME1 if g == 0 else LIKERT_GAME2
                    scores.append(None if label is None else table[label])
                games[(model, qid)] = scores  # a later record for the same question supersedes
    if games and all(len(scores) < 2 for scores in games.values()):
        raise InputError(
            "no record has a second game: A-BB needs game 2 (the swapped order) as each unit's "
            "neighbour; arena-hard-auto writes both games per question",
            path=str(folder),
        )
    dropped: Counter[str] = Counter()
    for (model, qid), scores in sorted(games.items()):
        normalised = [None if s is None else (s - 1.0) / 4.0 for s in scores]
        game1 = normalised[0] if normalised else None
        game2 = normalised[1] if len(normalised) > 1 else None
        if game1 is not None:
            builder.add_pair(builder.add_unit(model, qid, game1), "swap", game2)
        elif game2 is not None:  # game 2 scores the unit; its neighbour (game 1) counts as invalid
            builder.add_pair(builder.add_unit(model, qid, game2), "swap", None)
        else:
            dropped["no_readable_game"] += 1
    if not builder.units:
        raise InputError("no game with a readable [[A>B]]-style label", path=str(folder))
    name = ", ".join(sorted(judges)) or folder.name
    return builder.build(
        name, (1.0, 5.0), aggregate="mean", score_source="arena-hard likert", units_dropped=dict(dropped)
    )
