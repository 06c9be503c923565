"""JSON and TOML from outside files, read strictly: one decoding rule for every file a user hands in.

Datasets, variants files, human labels, batch output files, arena-hard judgment files, templates and
configs come from elsewhere. `json.loads` reads `{"label": 1, "label": 2}` silently as label 2 (the
same ambiguity in a CSV header is refused), and a line nested 100,000 deep ends in a RecursionError
traceback. Here a repeated key and nesting deeper than `MAX_DEPTH` are decoding errors: a
`json.JSONDecodeError` (or `tomllib.TOMLDecodeError`) with the position, so each reader's message
names the file and the line as for any other bad JSON or TOML.

The run's own files (judgments.jsonl, read a million lines at a time by pyarrow or the fast path of
`answers`) are not read here: we wrote them.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Iterator
from typing import Any

from judgebench.errors import InputError

__all__ = ["MAX_DEPTH", "check_depth", "json_lines", "loads", "raw_decoder", "toml_loads"]

# Deeper than any dataset, label file or config needs; shallow enough that no reader or validator
# after the decoder (each walks the value recursively) comes near Python's recursion limit.
MAX_DEPTH = 100

# what nests (brackets) and what holds brackets that do not (strings; in TOML comments too)
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_TOML_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]'
)


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_object)


def _too_deep(text: str, tokens: re.Pattern[str]) -> int | None:
    """Where `text` first nests deeper than MAX_DEPTH, or None. Counting brackets costs nothing on
    ordinary text; only a text with more brackets than that is walked (its strings skipped)."""
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return None
    depth = 0
    for match in tokens.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in ("]", "}"):
            depth -= 1
    return None


def check_depth(text: str) -> None:
    """Refuse JSON text nesting deeper than MAX_DEPTH anywhere (a `json.JSONDecodeError` at the
    bracket); `raw_decoder`'s callers check a whole document once, not each value."""
    deep = _too_deep(text, _JSON_TOKENS)
    if deep is not None:
        raise json.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels", text, deep)


def loads(text: str) -> Any:
    """`json.loads`, refusing a repeated key in an object and nesting deeper than MAX_DEPTH (each a
    `json.JSONDecodeError` with the position)."""
    check_depth(text)
    return _decoded(text, 0, whole=True)[0]


def raw_decoder(text: str, at: int) -> tuple[Any, int]:
    """`json.JSONDecoder().raw_decode(text, at)` refusing a repeated key (the caller runs
    `check_depth` over the whole text first)."""
    return _decoded(text, at, whole=False)


def _decoded(text: str, at: int, *, whole: bool) -> tuple[Any, int]:
    try:
        if whole:
            return _DECODER.decode(text), len(text)
        return _DECODER.raw_decode(text, at)
    except _RepeatedKey as exc:
        found = [m.start() for m in re.finditer(re.escape(json.dumps(exc.key)) + r"\s*:", text[at:])]
        where = at + found[1] if len(found) > 1 else at  # its second spelling, where it can be found
        msg = f"the key {json.dumps(exc.key)} is repeated (which one holds?)"
        raise json.JSONDecodeError(msg, text, where) from None
    except RecursionError:  # a guard only: check_depth refuses such nesting first
        raise json.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels", text, at) from None


def json_lines(lines: Iterable[str], shown: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSON Lines file, decoded by `loads`; a line
    that does not decode is an `InputError` naming the file, the line and the column."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON: {exc.msg} (column {exc.colno})", path=shown, line=number
            ) from None


def toml_loads(text: str) -> dict[str, Any]:
    """`tomllib.loads`, refusing arrays and inline tables nested deeper than MAX_DEPTH (a
    `tomllib.TOMLDecodeError` naming the line) instead of ending in a RecursionError."""
    opened = _TOML_HEADERS.sub(lambda m: " " * len(m.group()), text)  # a [table] header nests nothing
    deep = _too_deep(opened, _TOML_TOKENS)
    if deep is None:
        try:
            return tomllib.loads(text)
        except RecursionError:  # a guard only
            deep = 0
    line = text.count("\n", 0, deep) + 1
    raise tomllib.TOMLDecodeError(f"arrays or tables nested deeper than {MAX_DEPTH} levels (at line {line})")


_TOML_HEADERS = re.compile(r"(?m)^[ \t]*\[\[?[^\[\]\n]*\]\]?")
