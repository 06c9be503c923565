"""One way to read a configuration file: TOML decoded strictly (`outside.toml_loads`: a repeated key
or deep nesting is refused), validated by a pydantic model that forbids unknown keys, and every
problem raised as one `ConfigFileError` naming the file, the line where it can be found, the key path
(`judges.gpt41mini.rpm`) and what is wrong.

Each configs/*.toml file (and each probe, template, judges or prices file a user hands in) has its
model in the room that uses it; a new configuration file is a model and one `load_config` call.
"""

from __future__ import annotations

import re
import tomllib
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, RootModel, ValidationError

from judgebench.errors import ConfigFileError
from judgebench.outside import toml_loads

__all__ = ["key_line", "load_config", "read_config", "validate_config"]

M = TypeVar("M", bound=BaseModel)

_AT_LINE = re.compile(r"\s*\(at line (\d+)(?:, column \d+)?\)")
_KEY_PART = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'[^'\n]*'|[A-Za-z0-9_-]+)\s*""")
_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$")


def read_config(path: str | Path, *, missing_ok: bool = False) -> tuple[dict[str, Any], str]:
    """The decoded table of `path` and its text. A file that is absent, not UTF-8 or not valid TOML
    is a ConfigFileError (with `missing_ok`, an absent file reads as an empty table)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return {}, ""
        raise ConfigFileError("file not found", path=str(file)) from None
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(file)) from None
    except OSError as exc:
        raise ConfigFileError(f"cannot be read ({exc.strerror or exc})", path=str(file)) from None
    try:
        return toml_loads(text), text
    except tomllib.TOMLDecodeError as exc:
        found = _AT_LINE.search(str(exc))
        reason = _AT_LINE.sub("", str(exc))
        line = int(found.group(1)) if found else None
        key = next((_dotted(p) for p, n in _keys_in_order(text) if n == line), None)
        raise ConfigFileError(f"not valid TOML ({reason})", path=str(file), line=line, key=key) from None


def validate_config(
    data: Mapping[str, Any], model: type[M], *, path: str | Path, text: str = "", within: str = ""
) -> M:
    """`data` (read from `path`, whose `text` locates lines) as `model`; the first problem is a
    ConfigFileError naming the key path (prefixed by `within`, where `data` is one table of the
    file) and the line that holds it."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        # an unknown key first: a typo there is also why a required key looks missing
        err = min(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        loc = tuple(part for part in err["loc"] if part != "root" or not issubclass(model, RootModel))
        shown = loc[:-1] if loc and loc[-1] == "[key]" else loc
        prefix = tuple(within.split(".")) if within else ()
        key = _dotted((*prefix, *shown))
        line = key_line(text, (*prefix, *shown)) if text else None
        raise ConfigFileError(_message(err, model, loc), path=str(path), key=key or None, line=line) from None


def load_config(path: str | Path, model: type[M], *, missing_ok: bool = False) -> M:
    """The configuration file `path` read strictly and validated as `model` (the one loader of every
    configuration file); every problem is a ConfigFileError in one style."""
    data, text = read_config(path, missing_ok=missing_ok)
    return validate_config(data, model, path=path, text=text)


def _message(err: Any, model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    if loc and loc[-1] == "[key]":  # a table's key that its key type refuses
        return f"unknown key ({str(err['msg']).replace('Input should be', 'known here:')})"
    if err["type"] == "extra_forbidden":
        known = _keys_at(model, loc[:-1])
        return "unknown key" + (f" (known here: {', '.join(known)})" if known else "")
    if err["type"] == "missing":
        return "missing (a required key)"
    msg = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if "input" in err and err["type"].endswith("_type"):
        msg += f", got {err['input']!r}"
    return msg


def _dotted(parts: tuple[Any, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _keys_at(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The keys a table at `loc` of `model` takes (for an unknown key's message), or []."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, RootModel):
            current = _unwrap(current.model_fields["root"].annotation)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return []
            current = field.annotation
        elif get_origin(current) in (dict, list, tuple):
            args = get_args(current)
            current = args[-1] if args else Any
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel) and not issubclass(current, RootModel):
        return list(current.model_fields)
    return []


def _unwrap(annotation: Any) -> Any:
    """`X | None` as X (an optional table takes X's keys)."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def _key(text: str) -> tuple[str, ...] | None:
    """A dotted TOML key (`a."b.c".d`) as its parts, or None."""
    parts: list[str] = []
    rest = text
    while True:
        match = _KEY_PART.match(rest)
        if not match:
            return None
        token = match.group(1)
        parts.append(token[1:-1] if token[0] in "\"'" else token)
        rest = rest[match.end() :]
        if not rest:
            return tuple(parts)
        if not rest.startswith("."):
            return None
        rest = rest[1:]


def _key_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Every key path of a TOML text (array-of-tables entries numbered) and the first line that sets it."""
    lines: dict[tuple[Any, ...], int] = {}
    for path, number in _keys_in_order(text):
        lines.setdefault(path, number)
    return lines


def _keys_in_order(text: str) -> Iterator[tuple[tuple[Any, ...], int]]:
    """Each table header and key line of a TOML text: its key path and line number, in order."""
    counts: dict[tuple[Any, ...], int] = {}
    table: tuple[Any, ...] = ()
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2:
                in_string = None
            continue
        header = _HEADER.match(line)
        if header and "=" not in line.split("]")[0]:
            parts = _key(header.group(2))
            if parts is None:
                continue
            if header.group(1) == "[[":
                index = counts[parts] = counts.get(parts, -1) + 1
                table = (*_numbered(parts, counts), index)
            else:
                table = _numbered(parts, counts)
            yield table, number
            continue
        name, sep, value = line.partition("=")
        parts = _key(name) if sep and not name.lstrip().startswith("#") else None
        if parts is not None:
            yield (*table, *parts), number
            in_string = next((q for q in ('"""', "'''") if value.count(q) % 2), None)


def _numbered(parts: tuple[str, ...], counts: Mapping[tuple[Any, ...], int]) -> tuple[Any, ...]:
    """A header's path with the current entry of each array of tables it passes through."""
    out: list[Any] = []
    for k in range(1, len(parts) + 1):
        out.append(parts[k - 1])
        if parts[:k] in counts and k < len(parts):
            out.append(counts[parts[:k]])
    return tuple(out)


def key_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """The line of `text` that sets `loc`, or of the nearest table or key above it that the text
    states (a key inside an inline table: the line of that table); None where nothing matches."""
    lines = _key_lines(text)
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None
