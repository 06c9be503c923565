"""Scores tables (system, unit, context, score [+ factor columns]) and arena-hard-auto judgment folders
as ScoreSets, normalised by the declared scale (never the observed range)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from judgebench.bbe.scores import ScoreSet, ScoreSetBuilder
from judgebench.errors import InputError
from judgebench.outside import json_lines, loads

# --- generic tables -------------------------------------------------------------------------------

TABLE_COLUMNS = ("system", "unit", "context", "score")


def read_table(path: Path) -> pd.DataFrame:
    """CSV, TSV, JSONL/NDJSON or a JSON array of row objects."""
    if not path.exists():
        raise InputError("file not found", path=str(path))
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson", ".json"):
            frame = pd.DataFrame.from_records(_json_rows(path, lines=suffix != ".json"))
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


def _json_rows(path: Path, *, lines: bool) -> list[dict[str, object]]:
    """The row objects of a JSON Lines file or a JSON array, read by the strict outside-file reader
    (a repeated key or deep nesting refused, naming the file and the line)."""
    text = path.read_text(encoding="utf-8")
    rows: list[tuple[int | None, Any]]
    if lines:
        rows = [(number, row) for number, row in json_lines(text.split("\n"), str(path))]
    else:
        try:
            data = loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON: {exc.msg} (column {exc.colno})", path=str(path), line=exc.lineno
            ) from None
        if not isinstance(data, list):
            raise InputError("expected a JSON array of row objects", path=str(path))
        rows = [(None, row) for row in data]
    for number, row in rows:
        if not isinstance(row, dict):
            raise InputError(
                f"a row must be a JSON object, not {type(row).__name__}", path=str(path), line=number
            )
    return [row for _, row in rows]


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

    Units are (system, unit) rows; rows of one `unit` (a question every system answered) share a
    cluster: a question that moves one system's score under a perturbation tends to move the others',
    so the sensitivity bound, the certificate and the holdout split count questions, not rows.

    The first `base` row of a (system, unit) is its score; further `base` rows are repeats that measure
    jitter. A neighbour row whose score is empty or not a number is an invalid neighbour (counted).
    A table row number in messages counts the header as line 1.
    """
    lo, hi = scale
    if not hi > lo:
        raise InputError(f"--scale needs MIN < MAX, got {lo} {hi}")
    builder = ScoreSetBuilder()
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
            idx = builder.add_unit(system, unit, score, group=unit)  # systems share the question
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
    scores the unit and its neighbour is counted invalid. Scale 1..5. The models share the questions:
    a question is one cluster (in the bound, the certificate and the holdout split).
    """
    if not folder.is_dir():
        raise InputError("not a folder of arena-hard-auto judgment files (<model>.jsonl)", path=str(folder))
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise InputError("no *.jsonl judgment files", path=str(folder))
    builder = ScoreSetBuilder()
    judges: set[str] = set()
    games: dict[tuple[str, str], list[int | None]] = {}
    for file in files:
        with open(file, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = loads(line)
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
            builder.add_pair(builder.add_unit(model, qid, game1, group=qid), "swap", game2)
        elif game2 is not None:  # game 2 scores the unit; its neighbour (game 1) counts as invalid
            builder.add_pair(builder.add_unit(model, qid, game2, group=qid), "swap", None)
        else:
            dropped["no_readable_game"] += 1
    if not builder.units:
        raise InputError("no game with a readable [[A>B]]-style label", path=str(folder))
    name = ", ".join(sorted(judges)) or folder.name
    return builder.build(
        name, (1.0, 5.0), aggregate="mean", score_source="arena-hard likert", units_dropped=dict(dropped)
    )
