"""The text transforms a probe is made of, registered in one place (`TRANSFORMS`).

Each transform maps one text to another, deterministically given (item, probe, field), and must
keep what the text says: a probe is label-preserving by construction, like a translation. A probe
file (configs/probes/*.toml) composes them by name with parameters, so a new probe made of these
transforms needs no code; a new kind of transform is one function registered with
`register_transform` (here, or in a module of its own that calls it once on import).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgebench.probes.markdown_patterns import strip_markdown

Params = Mapping[str, Any]


@dataclass(frozen=True)
class TextContext:
    """What a transform may know about the text it rewrites."""

    item_id: str
    probe: str  # the probe instance (condition on the source), e.g. `length`
    field: str  # instruction, output_1 or output_2
    language: str  # the base condition's name: en, zh, ls, ...


class TransformError(ValueError):
    """A transform cannot apply to this text (e.g. no padding sentences for the language)."""


def _draw(ctx: TextContext, salt: str) -> int:
    blob = "\x1f".join((ctx.item_id, ctx.probe, ctx.field, salt)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def _pool(params: Params, key: str, ctx: TextContext) -> list[str]:
    """A per-language list parameter (`sentences.en`, `sentences.zh`): the base's own, else its
    `fallback` language's (e.g. ls -> zh), else an error naming what is missing."""
    table = params.get(key, {})
    if not isinstance(table, Mapping):
        raise TransformError(f"parameter '{key}' must be a table of language -> list of strings")
    fallback = params.get("fallback", {})
    language = ctx.language if ctx.language in table else fallback.get(ctx.language, ctx.language)
    pool = table.get(language)
    if not pool:
        raise TransformError(f"no '{key}' for language '{ctx.language}' (add {key}.{ctx.language})")
    return [str(x) for x in pool]


def pad(text: str, params: Params, ctx: TextContext) -> str:
    """Append `count` content-free but fluent sentences in the text's language, chosen per item
    from the pool (several paddings: which ones and in what order depends on the item)."""
    pool = _pool(params, "sentences", ctx)
    count = int(params.get("count", 3))
    if count < 1:
        raise TransformError("parameter 'count' must be at least 1")
    ranked = sorted(range(len(pool)), key=lambda i: _draw(ctx, f"pad{i}"))
    chosen = [pool[i] for i in ranked[: min(count, len(pool))]]
    joiner = str(params.get("joiner", {}).get(ctx.language, " "))
    return text.rstrip() + "\n\n" + joiner.join(chosen)


_BLANK_RUN = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING = re.compile(r"[ \t]+\n")


def terse(text: str, params: Params, ctx: TextContext) -> str:
    """The same content with less around it: trailing spaces and runs of blank lines removed, and
    whole opening or closing lines that are stock pleasantries (`filler` patterns per language)
    dropped. Nothing inside the answer is touched, so a text without such lines stays as it is."""
    out = _BLANK_RUN.sub("\n\n", _TRAILING.sub("\n", text.replace("\r\n", "\n"))).strip()
    try:
        patterns = [re.compile(p, re.IGNORECASE) for p in _pool(params, "filler", ctx)]
    except TransformError:
        patterns = []
    lines = out.split("\n")
    while len(lines) > 1 and any(p.fullmatch(lines[0].strip()) for p in patterns):
        lines = lines[1:]
        while len(lines) > 1 and not lines[0].strip():
            lines = lines[1:]
    while len(lines) > 1 and any(p.fullmatch(lines[-1].strip()) for p in patterns):
        lines = lines[:-1]
        while len(lines) > 1 and not lines[-1].strip():
            lines = lines[:-1]
    return "\n".join(lines)


def plain_text(text: str, params: Params, ctx: TextContext) -> str:
    """Markdown removed, words kept (`markdown.strip_markdown`)."""
    return strip_markdown(text)


def _text_for(params: Params, ctx: TextContext) -> str:
    """The `text` parameter for the item's language: a string, or a table by language (with an
    optional `fallback` table naming the language to borrow from)."""
    value = params.get("text")
    if isinstance(value, Mapping):
        value = value.get(ctx.language) or value.get(params.get("fallback", {}).get(ctx.language, ""))
    if not isinstance(value, str) or not value:
        raise TransformError(f"parameter 'text' gives nothing for language '{ctx.language}'")
    return value


def append(text: str, params: Params, ctx: TextContext) -> str:
    """`text` (or `text.LANG`) added after the text, separated by `separator` (default a blank line)."""
    value = _text_for(params, ctx)
    return text + str(params.get("separator", "\n\n")) + value


def prepend(text: str, params: Params, ctx: TextContext) -> str:
    """`text` (or `text.LANG`) put before the text, separated by `separator`."""
    value = _text_for(params, ctx)
    return value + str(params.get("separator", "\n\n")) + text


def regex(text: str, params: Params, ctx: TextContext) -> str:
    """Every match of `pattern` replaced by `replacement` (Python `re.sub` syntax)."""
    pattern, replacement = params.get("pattern"), params.get("replacement", "")
    if not isinstance(pattern, str) or not isinstance(replacement, str):
        raise TransformError("parameters 'pattern' and 'replacement' must be strings")
    return re.sub(pattern, replacement, text)


Transform = Callable[[str, Params, TextContext], str]


@dataclass(frozen=True)
class TransformInfo:
    """A registered transform: its function, whether it needs a model call, whether it changes text."""

    run: Transform | None
    needs_model: bool = False
    summary: str = ""


# The one registry of transforms a probe file may name. `template` changes no text: its calls are
# judged under other judge templates (the probe's `templates`).
TRANSFORMS: dict[str, TransformInfo] = {
    "pad": TransformInfo(pad, summary="fluent content-free sentences appended (per language)"),
    "terse": TransformInfo(terse, summary="blank runs, trailing spaces and stock pleasantry lines removed"),
    "strip_markdown": TransformInfo(plain_text, summary="Markdown markup removed, words kept"),
    "append": TransformInfo(append, summary="a fixed text appended"),
    "prepend": TransformInfo(prepend, summary="a fixed text put first"),
    "regex": TransformInfo(regex, summary="a regular-expression substitution"),
    "template": TransformInfo(None, summary="the same texts under another judge template"),
}


def register_transform(name: str, info: TransformInfo) -> TransformInfo:
    """Add a transform probe files may name (its name must be new)."""
    if name in TRANSFORMS:
        raise ValueError(f"transform '{name}' is already registered")
    TRANSFORMS[name] = info
    return info


def unregister_transform(name: str) -> None:
    """Remove a transform (a test's toy)."""
    TRANSFORMS.pop(name, None)


def check_regex(params: Params) -> str | None:
    """Why a `regex` step's pattern cannot compile, or None: a bad pattern is a config error."""
    try:
        re.compile(str(params.get("pattern", "")))
    except re.error as exc:
        return f"bad pattern ({exc})"
    return None


def apply_steps(text: str, steps: Sequence[tuple[str, Params]], ctx: TextContext) -> str:
    """Run the named transforms in order."""
    for name, params in steps:
        info = TRANSFORMS[name]
        if info.run is not None:
            text = info.run(text, params, ctx)
    return text
