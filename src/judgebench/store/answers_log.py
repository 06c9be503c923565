"""judgments.jsonl as the stages that resume a run need it: one light `Answer` per line, no `Judgment`.

A resumed `judge`, an `--until-settled` round, an import or a priced dry run asks which calls are
answered and a few fields of each answer (the verdict, the error of a failed call, the judge's
template, the reply tokens). Validating every line into a `Judgment` cost about 8 KB and tens of
microseconds a line: 8 GB and minutes on a million-judgment run. `JudgmentLog` keeps an `Answer` (a
named tuple of those fields, its strings shared) per line instead, and reads whole records again only
for the lines asked for (`records`).

Exact by construction: a line is taken on the fast path only when every field it holds has the very
JSON type the `Judgment` model accepts unchanged (a string for a string, an int for an int, one of the
closed values for `kind`, `winner` and `label`, ...), so the model would give the same values; any
other line is validated by the model itself, which coerces what it coerces and refuses what it
refuses, naming the file and line as every reader does (`read_lines`, the one reading loop, which
also skips a torn line and keeps a whole record appended onto it).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from pydantic import ValidationError

from judgebench.errors import InputError
from judgebench.records import CallKey, Judgment, Kind, PlannedKey
from judgebench.store.file_index import BaseIndex
from judgebench.store.judgment_schema import closed_values, json_types, nested_checks, required_fields
from judgebench.store.torn_lines import note_torn

logger = logging.getLogger("judgebench.store.run_folder")

R = TypeVar("R")


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector paused while a million records are built: fresh objects that live on
    are no garbage, and walking them again and again took a sixth of a resume's time."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


_decode = json.JSONDecoder().decode  # json.loads of a str, less its per-call checks


def read_lines(path: Path, parse: Callable[[Any], R]) -> Iterator[tuple[int, R]]:
    """(line number, record) of each record of a run file, `parse` turning a line's JSON into one
    (raising pydantic's ValidationError for a bad record). A torn line (a JSON object cut short by a
    killed writer, at the end or, when another writer appended after it, anywhere) is skipped with a
    warning, keeping any whole record appended onto it; any other bad line is an error naming the
    file and line. The file is streamed: only the records are held."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        yield from parse_lines(fh, path, parse)


def parse_lines(
    lines: Iterable[bytes], path: Path, parse: Callable[[Any], R], *, at: list[int] | None = None
) -> Iterator[tuple[int, R]]:
    """`read_lines` over the lines of an open file (each with its newline, as a binary file gives
    them: a last line without one is what a writer killed mid-append leaves). `at[0]` is kept at
    the number of the line being read (after the loop: the file's line count)."""
    torn: list[int] = []
    at = at if at is not None else [0]
    for number, raw in enumerate(lines, start=1):
        at[0] = number
        if not raw or raw.isspace():  # a blank line (isspace: the whitespace strip() takes, no copy)
            continue
        try:
            yield number, parse(_decode(raw.decode("utf-8")))
        except RecursionError:  # nesting no record has (an edited file): named, not a traceback
            raise InputError("unreadable record (nested too deep)", path=str(path), line=number) from None
        except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
            if not raw.endswith(b"\n"):  # unterminated last line: a crash mid-append, not a bad record
                continue
            if isinstance(exc, ValidationError) or not raw.lstrip().startswith(b"{"):
                raise InputError(
                    f"unreadable record ({exc.__class__.__name__}: {exc})", path=str(path), line=number
                ) from None
            torn.append(number)
            salvaged = salvage(raw, parse)
            if salvaged is not None:
                yield number, salvaged
    if torn:
        note_torn(path)
        shown = ", ".join(map(str, torn[:10])) + (" ..." if len(torn) > 10 else "")
        logger.warning(
            "warning: %s: skipped %d torn line(s) (line %s): a writer was killed mid-line; the "
            "stage that writes this file repairs it when it next runs (the fragments kept aside)",
            path,
            len(torn),
            shown,
        )


def salvage(raw: bytes, parse: Callable[[Any], R]) -> R | None:
    """A whole record appended onto a torn line (`{"a": 1, "b{"a": 2}`): the longest tail that
    parses, or None."""
    start = raw.find(b"{", 1)
    while start != -1:
        try:
            return parse(json.loads(raw[start:].decode("utf-8")))
        except (json.JSONDecodeError, UnicodeDecodeError, ValidationError):
            start = raw.find(b"{", start + 1)
    return None


class Answer(NamedTuple):
    """What a resuming stage needs of one judgments.jsonl line (values as the `Judgment` model gives
    them; `usage` flattened: tokens None when the line records no usage)."""

    judge: str
    item_id: str
    subset: str
    kind: Kind
    condition: str
    order: str
    verdict: str | None
    winner: str | None
    label: int | None
    confidence: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    error: str | None
    template: str | None
    reask: int
    has_raw: bool  # the judge's text was recorded (raw is not None)
    from_cache: bool | None  # answered from the response store (nothing paid by this line)
    line: int  # the line of the file that holds the whole record (1-based)

    def call_key(self) -> CallKey:
        return CallKey(self.judge, self.item_id, self.kind, self.condition, self.order)


class Answered(Protocol):
    """What deciding whether a call is done needs of its last record (an `Answer` or a `Judgment`)."""

    @property
    def verdict(self) -> str | None: ...

    @property
    def error(self) -> str | None: ...


class AnswerSink(Protocol):
    """A judgments file's index that calls are judged into (`JudgmentLog` for judgments.jsonl,
    `run_folder.LineIndex` for bbe_neighbours.jsonl): what is answered, and the appender's hooks."""

    @property
    def path(self) -> Path: ...

    def latest(self) -> Mapping[CallKey, Answered]: ...

    def before_append(self, st: os.stat_result) -> None: ...

    def appended(self, record: Judgment, st: os.stat_result) -> None: ...


def answer_of(j: Judgment, line: int) -> Answer:
    usage = j.usage
    return Answer(
        j.judge, j.item_id, j.subset, j.kind, j.condition, j.order, j.verdict, j.winner, j.label,
        j.confidence, None if usage is None else usage.input_tokens,
        None if usage is None else usage.output_tokens, j.cost_usd, j.error, j.template, j.reask,
        j.raw is not None, j.from_cache, line,
    )  # fmt: skip


# --- the fast path: a line the model would take unchanged ------------------------------------------

# each field of a Judgment and the JSON types it takes unchanged (bool is not an int here: type() is),
# derived from the model (judgment_schema): a field added there is checked here too
_TYPES: dict[str, frozenset[type]] = json_types(Judgment)
_REQUIRED = required_fields(Judgment)
# the fields of closed values (kind, winner, label) and those values
_CLOSED = tuple(closed_values(Judgment).items())
_KINDS = closed_values(PlannedKey)["kind"]  # a plan line's kinds
# the nested objects (usage, perturbation): each field's JSON types and whether it must be there
_NESTED = nested_checks(Judgment)
_MISSING = object()


def _typed(keys: tuple[str, ...], kinds: tuple[type, ...]) -> bool:
    """Whether every field of these names has a JSON type the model takes unchanged, and the
    required ones are there (an unknown field is ignored, as the model ignores it)."""
    types = _TYPES
    for key, kind in zip(keys, kinds, strict=True):
        allowed = types.get(key)
        if allowed is not None and kind not in allowed:
            return False
    return all(k in keys for k in _REQUIRED)


# (field names, their value types) -> _typed: lines of one writer share a handful of shapes
_SHAPES: dict[tuple[tuple[str, ...], tuple[type, ...]], bool] = {}


def _plain(d: dict[str, Any]) -> bool:
    """Whether the `Judgment` model takes this line's JSON object as it stands (see the module doc);
    False leaves the line to the model."""
    shape = (tuple(d), tuple(map(type, d.values())))
    typed = _SHAPES.get(shape)
    if typed is None:
        if len(_SHAPES) > 4096:  # pragma: no cover - a file of ever-new field sets
            _SHAPES.clear()
        typed = _SHAPES[shape] = _typed(*shape)
    if not typed:
        return False
    get = d.get
    for name, values in _CLOSED:
        if get(name) not in values:
            return False
    for name, fields in _NESTED:
        inner = get(name)
        if inner is not None:
            for key, allowed, required in fields:
                value = inner.get(key, _MISSING)
                if value is _MISSING:
                    if required:
                        return False
                elif type(value) not in allowed:
                    return False
    return True


class _Shared:
    """One object per distinct string or whole number (a million lines name a few judges and
    subsets, and their token counts repeat); floats are left as they are (0.0 is not -0.0)."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.ints: dict[int, int] = {}

    def text(self, value: str) -> str:
        return self.strings.setdefault(value, value)


def _parser(shared: _Shared, at: list[int]) -> Callable[[Any], Answer]:
    """JSON object -> Answer (its line: `at[0]`, the line the reader is on)."""
    s, n, new = shared.strings.setdefault, shared.ints.setdefault, tuple.__new__

    def parse(d: Any) -> Answer:
        if type(d) is not dict or not _plain(d):
            return answer_of(Judgment.model_validate(d), at[0])  # the model decides
        get = d.get
        judge, item, subset, kind, cond, order = (
            d["judge"],
            d["item_id"],
            d["subset"],
            d["kind"],
            d["condition"],
            d["order"],
        )
        verdict, winner, template, usage = get("verdict"), get("winner"), get("template"), get("usage")
        confidence, cost = get("confidence"), get("cost_usd")
        return new(Answer, (  # tuple.__new__: the named tuple's own __new__ is a Python call
            s(judge, judge), s(item, item), s(subset, subset), s(kind, kind), s(cond, cond),
            s(order, order), None if verdict is None else s(verdict, verdict),
            None if winner is None else s(winner, winner), get("label"),
            float(confidence) if type(confidence) is int else confidence,  # the model's float of an int
            None if usage is None else n(i := usage.get("input_tokens", 0), i),
            None if usage is None else n(o := usage.get("output_tokens", 0), o),
            float(cost) if type(cost) is int else cost, get("error"),
            None if template is None else s(template, template), get("reask", 0),
            get("raw") is not None, get("from_cache"), at[0],
        ))  # fmt: skip

    return parse


def read_answers(path: Path) -> tuple[list[Answer], int]:
    """Every line's `Answer` in file order, and how many lines the file has (the number the next
    appended line takes, less one), the collector paused meanwhile."""
    if not path.exists():
        return [], 0
    at = [0]
    parse = _parser(_Shared(), at)
    with paused_gc(), open(path, "rb") as fh:
        answers = [a for _, a in parse_lines(fh, path, parse, at=at)]
    return answers, at[0]


def plan_keys(path: Path) -> dict[CallKey, CallKey]:
    """plan.jsonl's call keys in file order: a line of exactly five strings (and a known kind) is
    its key as it stands; any other line is the `PlannedKey` model's to take or refuse."""
    s = _Shared().text  # one object per distinct string

    def parse(d: Any) -> CallKey:
        if type(d) is dict:
            get = d.get
            judge, item, kind, cond, order = (
                get("judge"),
                get("item_id"),
                get("kind"),
                get("condition"),
                get("order"),
            )
            strings = type(judge) is str and type(item) is str and type(cond) is str and type(order) is str
            if strings and type(kind) is str and kind in _KINDS:
                return CallKey(s(judge), s(item), kind, s(cond), s(order))  # type: ignore[arg-type]
        return PlannedKey.model_validate(d).key()

    with paused_gc():
        return {key: key for _, key in read_lines(path, parse)}


class JudgmentLog(BaseIndex[Answer, CallKey]):
    """judgments.jsonl read once into `Answer`s: the last per call key (`latest`), every line in file
    order (`lines`: a figure over every answer, re-asks and superseded ones too), whole records of
    chosen lines on demand (`records`). Appends through `run_folder.IndexedAppender` join it unread."""

    def __init__(self, path: Path) -> None:
        self._lines: list[Answer] = []
        self._count = 0  # lines in the file: an appended record is line _count + 1
        super().__init__(path)

    def _load(self, path: Path) -> dict[CallKey, Answer]:
        self._lines, self._count = read_answers(path)
        latest: dict[CallKey, Answer] = {}
        with paused_gc():
            for answer in self._lines:
                latest[answer.call_key()] = answer
        return latest

    def _reset(self) -> None:
        self._lines, self._count = [], 0

    def appended(self, record: Judgment, st: os.stat_result) -> None:
        """Called by the appender once `record` is a whole line of the file (`st` after the write);
        before the file is first read, nothing is learnt (the read will find it)."""
        if self._loaded:
            self._count += 1
            answer = answer_of(record, self._count)
            self._lines.append(answer)
            self._learn(answer.call_key(), answer, st)

    def lines(self) -> list[Answer]:
        """Every line of the file, in order (a missing file: none)."""
        return self._lines if self.latest() else []

    def records(self, lines: Iterable[int]) -> dict[int, Judgment]:
        """The whole records at these line numbers (`Answer.line`), read again from the file as the
        exact reader reads them (a record appended onto a torn line is the one salvaged)."""
        wanted = set(lines)
        out: dict[int, Judgment] = {}
        if not wanted or not self.path.exists():
            return out
        last = max(wanted)
        with open(self.path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if number in wanted:
                    record = _record(raw)
                    if record is not None:
                        out[number] = record
                if number >= last:
                    break
        return out


def _record(raw: bytes) -> Judgment | None:
    try:
        return Judgment.model_validate(json.loads(raw.decode("utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError):
        return salvage(raw, Judgment.model_validate)
