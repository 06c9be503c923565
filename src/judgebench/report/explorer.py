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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from judgebench.records import AuditFlag, Judgment

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


@dataclass
class ExplorerData:
    """What the explorer shows: the run's judgments (last per call key), the items' texts per (item,
    condition) (en is the item itself, the others its variants) and the audit flags."""

    judgments: Sequence[Judgment]
    texts: Mapping[tuple[str, str], ItemTexts] = field(default_factory=dict)
    audit: Sequence[AuditFlag] = ()
    conditions: Sequence[str] = ()  # display order; conditions seen in the judgments are appended


@dataclass
class ExplorerRow:
    """One item x judge: its pair judgments and tie-probes, and the conditions it is unstable in."""

    item_id: str
    judge: str
    subset: str
    label: int | None
    judgments: list[Judgment]
    flipped: list[str]  # target conditions whose verdict differs from en in some order
    inconsistent: list[str]  # conditions whose orig and swap verdicts differ
    wrong_en_only: bool  # wrong in en in some order, right in every valid target verdict

    @property
    def unstable(self) -> bool:
        return bool(self.flipped or self.inconsistent)


def _valid(j: Judgment) -> str | None:
    return j.verdict if j.verdict is not None and j.verdict != "invalid" else None


def condition_order(data: ExplorerData) -> list[str]:
    seen = list(dict.fromkeys(data.conditions))
    for j in data.judgments:
        if j.kind == "pair" and j.condition not in seen:
            seen.append(j.condition)
    if SOURCE in seen:
        seen.remove(SOURCE)
        seen.insert(0, SOURCE)
    return seen


def _row(item_id: str, judge: str, judgments: list[Judgment], conditions: Sequence[str]) -> ExplorerRow:
    pair: dict[tuple[str, str], str | None] = {}
    for j in judgments:
        if j.kind == "pair":
            pair[(j.condition, j.order)] = _valid(j)
    first = judgments[0]
    flipped = [
        c
        for c in conditions
        if c != SOURCE
        and any(
            pair.get((SOURCE, o)) is not None
            and pair.get((c, o)) is not None
            and pair[(SOURCE, o)] != pair[(c, o)]
            for o in PAIR_ORDERS
        )
    ]
    inconsistent = [
        c
        for c in conditions
        if pair.get((c, "orig")) is not None
        and pair.get((c, "swap")) is not None
        and pair[(c, "orig")] != pair[(c, "swap")]
    ]
    label = first.label
    wrong_en_only = False
    if label is not None:
        gold = str(label)
        en = [v for (c, _), v in pair.items() if c == SOURCE and v is not None]
        targets = [v for (c, _), v in pair.items() if c != SOURCE and v is not None]
        wrong_en_only = any(v != gold for v in en) and bool(targets) and all(v == gold for v in targets)
    return ExplorerRow(item_id, judge, first.subset, label, judgments, flipped, inconsistent, wrong_en_only)


def explorer_rows(data: ExplorerData) -> list[ExplorerRow]:
    """Every item x judge with a judgment, in the judgments' order of first appearance."""
    conditions = condition_order(data)
    groups: dict[tuple[str, str], list[Judgment]] = defaultdict(list)
    for j in data.judgments:
        groups[(j.item_id, j.judge)].append(j)
    return [_row(item, judge, js, conditions) for (item, judge), js in groups.items()]


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
    out = []
    for row in explorer_rows(data):
        if not row.unstable:
            continue
        texts = {
            c: data.texts[(row.item_id, c)].as_dict() for c in conditions if (row.item_id, c) in data.texts
        }
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
            for j in row.judgments
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
    rows = explorer_rows(data)
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
        for j in sorted(row.judgments, key=lambda j: (j.kind, cond_no.get(j.condition, 99), j.order)):
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
    for (item_id, cond), texts in data.texts.items():
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
