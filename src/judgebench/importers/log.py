"""What an importer hands back: items, judgments with their source line, human labels, the source's own
headline numbers, and every file read with its checksum.

Why one shape: the api stage writes any format the same way (items file, judgments.jsonl, human labels,
manifest entry), so a new format is one module that fills an `ImportedLog`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgebench.data.generic_dataset import parse_json  # the JSON array reader that keeps line numbers
from judgebench.errors import InputError
from judgebench.outside import loads
from judgebench.records import Item, Judgment, Winner
from judgebench.records.clock import now_iso
from judgebench.records.items import Label

# which output a letter names in each order: orig shows output_1 as A, swap shows output_2 as A
_VERDICT = {("orig", "A"): "1", ("orig", "B"): "2", ("swap", "A"): "2", ("swap", "B"): "1"}


@dataclass(frozen=True)
class SourceLine:
    """One record of a source file: where it is, its text as read, and its parsed value."""

    path: str
    line: int
    text: str
    data: Any

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def error(self, message: str, *, field: str | None = None) -> InputError:
        """An error naming this record's file and line (and the field, when one is wrong)."""
        return InputError(message, path=self.path, line=self.line, field=field)

    def obj(self) -> dict[str, Any]:
        if not isinstance(self.data, dict):
            raise self.error(f"expected a JSON object, got {type(self.data).__name__}")
        return self.data

    def text_field(self, name: str, *, allow_empty: bool = True) -> str:
        value = self.obj().get(name)
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise self.error(f"'{name}' must be a{'' if allow_empty else ' non-empty'} string", field=name)
        return value


@dataclass(frozen=True)
class Headline:
    """One number by the source's own convention, to put beside the published one."""

    judge: str
    name: str  # e.g. judgebench_score, arena_hard_score, mt_bench_agreement_with_ties
    value: float | None
    n: int
    subset: str = "all"
    convention: str = ""  # how the source computes it, in words
    system: str | None = None  # the answering model it scores (Arena-Hard, AlpacaEval), if any


@dataclass(frozen=True)
class HumanRow:
    """One human label of an imported item (the `report --human` file's row)."""

    item_id: str
    label: str  # "1" | "2" | "tie"
    annotator: str = ""
    condition: str = "en"


@dataclass
class ImportedLog:
    """Everything one import read."""

    format: str
    items: list[Item] = field(default_factory=list)
    judgments: list[Judgment] = field(default_factory=list)
    human: list[HumanRow] = field(default_factory=list)
    headlines: list[Headline] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # file -> SHA-256 of its bytes
    notes: list[str] = field(default_factory=list)
    # a format whose items are a known dataset (LLMBar's results): its spec and local copy; else the
    # run's dataset is `items`, written into the run folder
    dataset: tuple[str, str] | None = None

    @property
    def judges(self) -> list[str]:
        return list(dict.fromkeys(j.judge for j in self.judgments))

    def add_item(self, item: Item, seen: dict[str, Item], where: SourceLine) -> Item:
        """Keep `item` once; the same id with other texts is an error naming the line."""
        held = seen.get(item.id)
        if held is None:
            seen[item.id] = item
            self.items.append(item)
            return item
        if (held.instruction, held.output_1, held.output_2) != (
            item.instruction,
            item.output_1,
            item.output_2,
        ):
            raise where.error(f"item '{item.id}' appears again with other texts")
        return held


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read(path: Path) -> str:
    if not path.is_file():
        raise InputError("no such file", path=str(path))
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=str(path)) from None


def read_records(path: Path) -> Iterator[SourceLine]:
    """The records of a JSONL file (one object a line) or a JSON array (each element, with the line
    it starts on and its JSON text); a line that is not JSON is an error naming file and line."""
    text = _read(path)
    shown = str(path)
    if text.lstrip().startswith("["):
        for record in parse_json(text, shown):
            body = json.dumps(record.data, ensure_ascii=False)
            yield SourceLine(shown, record.line or 0, body, record.data)
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = loads(line)  # a repeated key or hostile nesting refused, as every outside file
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON: {exc.msg} (column {exc.colno})", path=shown, line=number
            ) from None
        yield SourceLine(shown, number, line.rstrip("\r"), data)


def verdict_of(order: str, letter: Winner) -> str:
    """The output a shown letter names (`1`/`2`), `tie` or `invalid`."""
    if letter == "Tie":
        return "tie"
    if letter == "invalid":
        return "invalid"
    return _VERDICT[(order, letter)]


def letter_of(order: str, verdict: str) -> Winner:
    """The letter the judge saw for a verdict given in output numbers."""
    if verdict == "tie":
        return "Tie"
    if verdict not in ("1", "2"):
        return "invalid"
    return "A" if _VERDICT[(order, "A")] == verdict else "B"


def pair_judgment(
    judge: str,
    item: Item,
    order: str,
    letter: Winner | None,
    source: SourceLine,
    *,
    raw: str | None,
    parse_error: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Judgment:
    """One imported en pair judgment: the letter the judge gave in `order` (None: the call failed, as
    the source records it; `parse_error` says why), its own text as `raw`, and the source record
    verbatim (file, line, text) in `params`, so every number traces to its line."""
    failed = letter is None
    return Judgment(
        judge=judge,
        item_id=item.id,
        subset=item.subset,
        kind="pair",
        condition="en",
        order=order,
        raw=raw,
        winner=letter,
        verdict=None if letter is None else verdict_of(order, letter),
        parse_error=parse_error if letter == "invalid" else None,
        error=parse_error if failed else None,
        label=item.label,
        model=judge,
        params={"source": source.where, "source_record": source.text, **(extra or {})},
        created_at=now_iso(),
    )


def gold(label: str | None) -> Label | None:
    return 1 if label == "1" else 2 if label == "2" else None
