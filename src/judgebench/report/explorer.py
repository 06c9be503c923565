"""The item explorer: one row per item x judge, its verdicts in every condition and order, and why it is
unstable (a language flip, a position inconsistency, an audit flag).

`explorer_rows` is the one place that decides which rows flipped or were inconsistent, with the rules of
the analysis (PROTOCOL §4: a flip compares valid verdicts of the same item and order in en and a
target; an inconsistency compares the valid orig and swap verdicts of one condition), so the explorer,
`report --export-unstable` and the metrics agree. `explorer_payload` packs the rows, the judgments and
the texts into compact columnar JSON (every distinct string once, in a string table) that the inlined
script of report.html renders page by page.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judgebench.records import AuditFlag, Judgment
from judgebench.store.judgment_table import JudgmentTable, judgment_table

SOURCE = "en"
PAIR_ORDERS = ("orig", "swap")
TEXT_FIELDS = ("instruction", "output_1", "output_2")


@dataclass(frozen=True)
class ItemTexts:
    """An item's three texts in one condition."""

    instruction: str
    output_1: str
    output_2: str

    def as_dict(self) -> dict[str, str]:
        return {"instruction": self.instruction, "output_1": self.output_1, "output_2": self.output_2}


# report.html embeds at most this many item x judge rows: past it, only the rows that matter (unstable,
# wrong in en only, audit-flagged), so the page opens fast at any run size; every number in the page
# still comes from the whole run, and `report --explorer all` or `--export-unstable` give the rest
ROW_LIMIT = 5000
# ... for a run in three conditions (en, zh, ls); a row's texts and verdicts grow with its conditions,
# so a 23-language run embeds ROW_LIMIT x 3 / 23 rows and its page stays about as light
LIMIT_CONDITIONS = 3


TextSource = Callable[[Collection[str]], Mapping[tuple[str, str], "ItemTexts"]]


@dataclass
class ExplorerData:
    """What the explorer shows: the run's judgments (last per call key: `table`, the run's columns, or
    `judgments` in memory), the items' texts per (item, condition) (en is the item itself, the others
    its variants), the audit flags, and how many rows the page may embed (None: all)."""

    judgments: Sequence[Judgment] = ()
    texts: Mapping[tuple[str, str], ItemTexts] = field(default_factory=dict)
    audit: Sequence[AuditFlag] = ()
    conditions: Sequence[str] = ()  # display order; conditions seen in the judgments are appended
    table: JudgmentTable | None = None
    row_limit: int | None = ROW_LIMIT
    # the texts of just the items given (a run's are read for the rows shown only); else `texts`
    text_source: TextSource | None = None
    _source: JudgmentTable | None = field(default=None, init=False, repr=False)
    _asked: set[str] = field(default_factory=set, init=False, repr=False)  # items text_source was asked for
    _fetched: dict[tuple[str, str], ItemTexts] = field(default_factory=dict, init=False, repr=False)
    _conditions: list[str] | None = field(default=None, init=False, repr=False)
    _rows: _Rows | None = field(default=None, init=False, repr=False)

    def texts_of(self, items: Collection[str]) -> Mapping[tuple[str, str], ItemTexts]:
        """The texts of `items` in every condition, in the order `texts` holds them. A source is asked
        only for items it was not asked for before (the page and `--export-unstable` share a read)."""
        wanted = set(items)
        if self.text_source is not None:
            missing = wanted - self._asked
            if missing:
                self._fetched.update(self.text_source(missing))
                self._asked |= missing
            held: Mapping[tuple[str, str], ItemTexts] = self._fetched
        else:
            held = self.texts
        return {key: texts for key, texts in held.items() if key[0] in wanted}

    def source(self) -> JudgmentTable:
        if self._source is None:
            self._source = self.table if self.table is not None else judgment_table(self.judgments)
        return self._source


@dataclass
class ExplorerRow:
    """One item x judge: where its judgments are (lines of the table) and the conditions it is
    unstable in."""

    item_id: str
    judge: str
    subset: str
    label: int | None
    lines: list[int]
    flipped: list[str]  # target conditions whose verdict differs from en in some order
    inconsistent: list[str]  # conditions whose orig and swap verdicts differ
    wrong_en_only: bool  # wrong in en in some order, right in every valid target verdict

    @property
    def unstable(self) -> bool:
        return bool(self.flipped or self.inconsistent)


def condition_order(data: ExplorerData) -> list[str]:
    if data._conditions is None:
        seen = list(dict.fromkeys(data.conditions))
        frame = data.source().frame
        for cond in frame.loc[frame["kind"] == "pair", "condition"].unique().tolist():
            if cond not in seen:
                seen.append(cond)
        if SOURCE in seen:
            seen.remove(SOURCE)
            seen.insert(0, SOURCE)
        data._conditions = seen
    return list(data._conditions)


@dataclass(frozen=True)
class _Rows:
    """Every item x judge row as arrays (a row is a contiguous slice of the table from `starts`):
    its flags per condition, and whether it is wrong in en only."""

    conditions: list[str]
    starts: IntArray
    flipped: BoolArray  # rows x conditions
    inconsistent: BoolArray
    wrong: BoolArray
    labels: npt.NDArray[np.float64]
    items: npt.NDArray[Any]  # per row
    judges: npt.NDArray[Any]
    subsets: npt.NDArray[Any]
    lines: IntArray  # per judgment: its line of the file

    @property
    def unstable(self) -> BoolArray:
        out: BoolArray = np.logical_or(self.flipped.any(axis=1), self.inconsistent.any(axis=1))
        return out

    def row(self, r: int) -> ExplorerRow:
        at = int(self.starts[r])
        end = int(self.starts[r + 1]) if r + 1 < len(self.starts) else len(self.lines)
        label = float(self.labels[r])
        return ExplorerRow(
            str(self.items[r]),
            str(self.judges[r]),
            str(self.subsets[r]),
            None if np.isnan(label) else int(label),
            self.lines[at:end].tolist(),
            [self.conditions[c] for c in np.flatnonzero(self.flipped[r])],
            [self.conditions[c] for c in np.flatnonzero(self.inconsistent[r])],
            bool(self.wrong[r]),
        )


def _at(frame: pd.DataFrame, column: str, starts: IntArray) -> npt.NDArray[Any]:
    out: npt.NDArray[Any] = frame[column].to_numpy(dtype=object)[starts]
    return out


def _row_arrays(data: ExplorerData) -> _Rows:
    """The rows' flags, once per `data`. A valid verdict is one the analysis counts (PROTOCOL §4):
    answered and not invalid. Vectorised: the table holds each item x judge's judgments
    contiguously, so a row is a slice and its verdicts one cube (rows x conditions x orders) of
    verdict codes, -1 where missing or invalid."""
    if data._rows is not None:
        return data._rows
    conditions = condition_order(data)
    f = data.source().frame
    if f.empty:
        empty = np.zeros((0, len(conditions)), dtype=bool)
        none = np.zeros(0, dtype=np.int64)
        text = none.astype(object)
        data._rows = _Rows(
            conditions, none, empty, empty, none.astype(bool), none.astype(float), text, text, text, none
        )
        return data._rows
    judge_codes, _ = pd.factorize(f["judge"])
    item_codes, _ = pd.factorize(f["item_id"])
    change = np.r_[True, (judge_codes[1:] != judge_codes[:-1]) | (item_codes[1:] != item_codes[:-1])]
    starts = np.flatnonzero(change)
    row_of = np.cumsum(change) - 1
    cube, verdicts, orders = _verdict_cube(f, row_of, len(starts), conditions)
    en = conditions.index(SOURCE) if SOURCE in conditions else -1
    pair_orders = [orders.index(o) for o in PAIR_ORDERS if o in orders]

    def differ(a: IntArray, b: IntArray) -> BoolArray:
        out: BoolArray = (a >= 0) & (b >= 0) & (a != b)
        return out

    n_rows, n_conds = len(starts), len(conditions)
    flipped = np.zeros((n_rows, n_conds), dtype=bool)
    inconsistent = np.zeros((n_rows, n_conds), dtype=bool)
    if en >= 0:
        for o in pair_orders:
            flipped |= differ(cube[:, en : en + 1, o], cube[:, :, o])
        flipped[:, en] = False
    if len(pair_orders) == 2:
        inconsistent = differ(cube[:, :, pair_orders[0]], cube[:, :, pair_orders[1]])
    labels = f["label"].to_numpy(dtype=float)[starts]
    wrong = _wrong_in_en_only(cube, verdicts, labels, en)
    data._rows = _Rows(
        conditions,
        starts,
        flipped,
        inconsistent,
        wrong,
        labels,
        _at(f, "item_id", starts),
        _at(f, "judge", starts),
        _at(f, "subset", starts),
        f["line"].to_numpy(dtype=np.int64),
    )
    return data._rows


def explorer_rows(data: ExplorerData) -> list[ExplorerRow]:
    """Every item x judge with a judgment, by judge and item (the table's order)."""
    rows = _row_arrays(data)
    return [rows.row(r) for r in range(len(rows.starts))]


IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _verdict_cube(
    f: pd.DataFrame, row_of: IntArray, n_rows: int, conditions: Sequence[str]
) -> tuple[IntArray, list[str], list[str]]:
    """rows x conditions x pair orders of valid verdict codes (-1: missing, invalid or not judged),
    with the verdicts and the orders the codes stand for."""
    pair = (f["kind"] == "pair").to_numpy()
    verdict = f["verdict"].to_numpy(dtype=object)[pair]
    valid = np.array([isinstance(v, str) and v != "invalid" for v in verdict], dtype=bool)
    masked = np.asarray([v if ok else None for v, ok in zip(verdict, valid, strict=True)], dtype=object)
    codes, verdicts = pd.factorize(masked)  # None: code -1
    order_codes, orders = pd.factorize(f["order"].to_numpy(dtype=object)[pair])
    cond_no = {c: i for i, c in enumerate(conditions)}
    conds = np.array([cond_no[c] for c in f["condition"].to_numpy(dtype=object)[pair]], dtype=np.int64)
    cube = np.full((n_rows, len(conditions), max(len(orders), 1)), -1, dtype=np.int64)
    cube[row_of[pair], conds, order_codes] = np.where(valid, codes, -1)
    return cube, [str(v) for v in verdicts], [str(o) for o in orders]


def _wrong_in_en_only(
    cube: IntArray, verdicts: list[str], labels: npt.NDArray[np.float64], en: int
) -> BoolArray:
    """Wrong in en in some order, and right in every valid target verdict (there being one)."""
    if en < 0:
        return np.zeros(cube.shape[0], dtype=bool)
    code_of = {v: i for i, v in enumerate(verdicts)}
    gold = np.array(
        [code_of.get(str(int(x)), -2) if not np.isnan(x) else -3 for x in labels], dtype=np.int64
    )[:, None]
    en_v = cube[:, en, :]
    targets = np.delete(cube, en, axis=1).reshape(cube.shape[0], -1)
    en_wrong = ((en_v >= 0) & (en_v != gold)).any(axis=1)
    some_target = (targets >= 0).any(axis=1)
    targets_right = ((targets < 0) | (targets == gold)).all(axis=1)
    out: BoolArray = (gold[:, 0] != -3) & en_wrong & some_target & targets_right
    return out


def _limit(data: ExplorerData) -> int | None:
    """The row limit for this run's conditions (fewer rows, in proportion, past three)."""
    if data.row_limit is None:
        return None
    return data.row_limit * LIMIT_CONDITIONS // max(LIMIT_CONDITIONS, len(condition_order(data)))


def _kept(ranks: IntArray, limit: int | None) -> IntArray:
    """The indices a page keeps, in their order: every one up to `limit`, else the best ranked that
    matter (rank < 3) up to `limit`, ties in their order."""
    if limit is None or len(ranks) <= limit:
        return np.arange(len(ranks), dtype=np.int64)
    best = np.argsort(ranks, kind="stable")[:limit]
    return np.sort(best[ranks[best] < 3])


def page_rows(data: ExplorerData, rows: Sequence[ExplorerRow]) -> list[ExplorerRow]:
    """The rows report.html embeds: all of them up to `row_limit`, else the ones that matter
    (unstable first, then wrong in en only, then audit-flagged), at most `row_limit` (fewer, in
    proportion, when there are more than three conditions)."""
    flagged = {flag.item_id for flag in data.audit}
    ranks = np.array(
        [0 if r.unstable else 1 if r.wrong_en_only else 2 if r.item_id in flagged else 3 for r in rows],
        dtype=np.int64,
    )
    return [rows[i] for i in _kept(ranks, _limit(data)).tolist()]


def _ranks(data: ExplorerData) -> IntArray:
    """Each row's rank as `page_rows` ranks it: 0 unstable, 1 wrong in en only, 2 audit-flagged, 3 other."""
    rows = _row_arrays(data)
    if not len(rows.starts):
        return np.zeros(0, dtype=np.int64)
    flagged = np.isin(rows.items, sorted({flag.item_id for flag in data.audit}))
    return np.select([rows.unstable, rows.wrong, flagged], [0, 1, 2], default=3).astype(np.int64)


def _verdict_order(conditions: Sequence[str]) -> Any:
    cond_no = {c: i for i, c in enumerate(conditions)}
    return lambda j: (j.kind, cond_no.get(j.condition, 99), j.order)


def _audit_by_item(flags: Iterable[AuditFlag]) -> dict[str, list[AuditFlag]]:
    out: dict[str, list[AuditFlag]] = defaultdict(list)
    for flag in flags:
        out[flag.item_id].append(flag)
    return out


def _audit_text(flag: AuditFlag) -> str:
    return f"{flag.condition} {flag.field}: {flag.rule} ({flag.detail})"


def unstable_records(data: ExplorerData) -> list[dict[str, Any]]:
    """The flipped or position-inconsistent item x judge rows for human review (one JSONL line each):
    the item, its texts in every condition, every verdict with the raw answer, and its audit flags."""
    conditions = condition_order(data)
    audit = _audit_by_item(data.audit)
    table = _row_arrays(data)
    rows = [table.row(r) for r in np.flatnonzero(table.unstable).tolist()]
    records = data.source().records(line for row in rows for line in row.lines)
    order = _verdict_order(conditions)
    shown = data.texts_of({row.item_id for row in rows})
    out = []
    for row in rows:
        texts = {c: shown[(row.item_id, c)].as_dict() for c in conditions if (row.item_id, c) in shown}
        verdicts = [
            {
                "kind": j.kind,
                "condition": j.condition,
                "order": j.order,
                "verdict": j.verdict,
                "winner": j.winner,
                "raw": j.raw,
                "parse_error": j.parse_error,
                "error": j.error,
            }
            for j in sorted((records[line] for line in row.lines), key=order)
        ]
        out.append(
            {
                "item_id": row.item_id,
                "judge": row.judge,
                "subset": row.subset,
                "label": row.label,
                "flipped": row.flipped,
                "position_inconsistent": row.inconsistent,
                "wrong_in_en_only": row.wrong_en_only,
                "texts": texts,
                "verdicts": verdicts,
                "audit": [flag.model_dump() for flag in audit.get(row.item_id, [])],
            }
        )
    return out


class _Strings:
    """A string table: every distinct string stored once, referenced by its index (-1 for None)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.values: list[str] = []

    def __call__(self, value: str | None) -> int:
        if value is None:
            return -1
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.values)
            self.values.append(value)
        return found


def explorer_payload(data: ExplorerData) -> dict[str, Any]:
    """Columnar arrays for the page: rows (item x judge), their judgments as contiguous ranges, the texts
    and audit flags per item; every string through one table `s`."""
    conditions = condition_order(data)
    table = _row_arrays(data)
    ranks = _ranks(data)
    kept = _kept(ranks, _limit(data))
    rows = [table.row(r) for r in kept.tolist()]
    records = data.source().records(line for row in rows for line in row.lines)
    order = _verdict_order(conditions)
    s = _Strings()
    judges = list(dict.fromkeys(r.judge for r in rows))
    items = list(dict.fromkeys(r.item_id for r in rows))
    item_no = {item: i for i, item in enumerate(items)}
    cond_no = {c: i for i, c in enumerate(conditions)}
    subsets = list(dict.fromkeys(r.subset for r in rows))
    item_subset = {r.item_id: r.subset for r in rows}
    item_label = {r.item_id: r.label for r in rows}

    def mask(names: Sequence[str]) -> int:
        return sum(1 << cond_no[c] for c in names if c in cond_no)

    rcols: dict[str, list[int]] = {
        k: [] for k in ("item", "judge", "flip", "incon", "wrong_en_only", "start")
    }
    jcols: dict[str, list[Any]] = {
        k: []
        for k in ("cond", "kind", "order", "verdict", "winner", "raw", "parse_error", "error", "confidence")
    }
    judge_no = {judge: i for i, judge in enumerate(judges)}
    for row in rows:
        rcols["item"].append(item_no[row.item_id])
        rcols["judge"].append(judge_no[row.judge])
        rcols["flip"].append(mask(row.flipped))
        rcols["incon"].append(mask(row.inconsistent))
        rcols["wrong_en_only"].append(int(row.wrong_en_only))
        rcols["start"].append(len(jcols["cond"]))
        for j in sorted((records[line] for line in row.lines), key=order):
            jcols["cond"].append(s(j.condition))
            jcols["kind"].append(0 if j.kind == "pair" else 1)
            jcols["order"].append(s(j.order))
            jcols["verdict"].append(s(j.verdict))
            jcols["winner"].append(s(j.winner))
            jcols["raw"].append(s(j.raw))
            jcols["parse_error"].append(s(j.parse_error))
            jcols["error"].append(s(j.error))
            jcols["confidence"].append(None if j.confidence is None else round(j.confidence, 3))
    rcols["start"].append(len(jcols["cond"]))
    tcols: dict[str, list[int]] = {"item": [], "cond": [], "text": []}
    for (item_id, cond), texts in data.texts_of(items).items():
        if item_id in item_no:
            tcols["item"].append(item_no[item_id])
            tcols["cond"].append(s(cond))
            tcols["text"].extend(s(getattr(texts, f)) for f in TEXT_FIELDS)
    acols: dict[str, list[int]] = {"item": [], "cond": [], "text": []}
    for flag in data.audit:
        if flag.item_id in item_no:
            acols["item"].append(item_no[flag.item_id])
            acols["cond"].append(s(flag.condition))
            acols["text"].append(s(_audit_text(flag)))
    return {
        "version": 1,
        "judges": judges,
        "conditions": conditions,
        "subsets": subsets,
        "items": {
            "id": items,
            "subset": [subsets.index(item_subset[i]) for i in items],
            "label": [item_label[i] or 0 for i in items],
        },
        "rows": rcols,
        "judgments": jcols,
        "texts": tcols,
        "audit": acols,
        "s": s.values,
        # rows of the run, and those left out of the page by the row limit (0: every row is here)
        "rows_total": len(ranks),
        "rows_left_out": len(ranks) - len(rows),
        # the rows that matter (unstable, wrong in en only, of an audit-flagged item) left out
        "rows_matter_left_out": int((ranks < 3).sum() - (ranks[kept] < 3).sum()),
    }


def payload_json(data: ExplorerData) -> str:
    """The payload as JSON safe inside a <script type="application/json"> element."""
    text = json.dumps(explorer_payload(data), ensure_ascii=False, separators=(",", ":"))
    # "</" would close the element and "<!--" open a comment: escape both (JSON keeps their meaning)
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _resource(name: str) -> str:
    return resources.files("judgebench").joinpath("resources", "explorer", name).read_text(encoding="utf-8")


def explorer_css() -> str:
    return _resource("explorer.css")


def explorer_js() -> str:
    return _resource("explorer.js")


EXPLORER_KEY = "explorer"
EXPLORER_TITLE = "Item explorer"
