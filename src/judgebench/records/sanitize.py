"""Outside text made safe to keep and to show: secrets masked (before any cut), lone surrogates
replaced, long text clipped with its original size known, and control characters made visible.

Data (a subset name, an item id, a judge's name or reply) reaches four formats, each through one
function: CSV cells `spreadsheet_cell` (formula prefixes neutralised), Markdown and HTML their
renderers' escape (`report/markdown_render.py`, `report/html.py`), the terminal the CLI's consoles; every one
shows a control character as its Unicode symbol (`visible_controls`) instead of obeying it.

One scrubbing function (`scrub`) serves every place a URL or an error text goes (the manifest,
judgments, stderr, the report): it masks the credentials it is given, then anything shaped like one
(`Bearer ...`, `sk-...`, `x-api-key: ...`, `user:token@` in a URL, `?key=...`), and only then may
the text be cut (`clip`), so a cut can never leave part of a key behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MASK",
    "clip",
    "lone_surrogate_at",
    "mask_url",
    "replace_surrogates",
    "scrub",
    "scrub_clip",
    "spreadsheet_cell",
    "surrogate_problem",
    "visible_controls",
]

MASK = "***"

# URL userinfo (scheme://user:pass@host) and query parameters that name a credential.
_URL_SECRET = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]*@|(?P<q>[?&][^=&\s]*(?:key|token|secret|sig)[^=&\s]*=)[^&\s\"']*",
    re.I,
)
# Things shaped like a credential, wherever they appear in free text.
_SHAPED = re.compile(
    r"(?P<bearer>\bBearer\s+)[^\s\"',;]+"
    r"|(?P<header>\b(?:x-api-key|x-goog-api-key|api[-_]?key|authorization)\"?\s*[:=]\s*\"?)[^\s\"',;]+"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{6,}"
    r"|\bAIza[A-Za-z0-9_\-]{10,}",
    re.I,
)
_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# a cell a spreadsheet would run as a formula (or as one after a leading tab or carriage return)
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _symbol(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400..U+241F: the control's own symbol, one column wide
    if code == 0x7F:
        return "\u2421"
    if code in (0x2028, 0x2029):
        return "\u2424"
    return "\ufffd"  # C1: no symbol of its own


def visible_controls(text: str, keep: str = "") -> str:
    """`text` with every control character (but those in `keep`) shown as its symbol (a carriage
    return as U+240D, an escape as U+241B): a terminal, a CSV reader or a Markdown viewer sees a
    character, never an instruction (a new row, a planted heading, a colour or cursor move)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _symbol(m), text)


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell as a spreadsheet may safely open it: text with its control characters shown as
    symbols and, when it starts with `=`, `+`, `-`, `@` (or a tab or carriage return), a leading `'`
    so it is read as text, never as a formula. Numbers are kept as they are."""
    if not isinstance(value, str):
        return value
    text = visible_controls(value)
    return "'" + text if value.startswith(_FORMULA) else text


def _url_mask(match: re.Match[str]) -> str:
    return f"{match.group('scheme')}{MASK}@" if match.group("scheme") else f"{match.group('q')}{MASK}"


def _shaped_mask(match: re.Match[str]) -> str:
    for group in ("bearer", "header"):
        if match.group(group):
            return f"{match.group(group)}{MASK}"
    return MASK


def mask_url(url: str) -> str:
    """`url` with its userinfo (`user:token@`) and credential query parameters masked."""
    return _URL_SECRET.sub(_url_mask, url)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every given secret (6 characters or more) and anything shaped like a credential
    masked (and lone surrogates replaced). Apply before any truncation."""
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, MASK)
    text = _SHAPED.sub(_shaped_mask, _URL_SECRET.sub(_url_mask, text))
    return _SURROGATE.sub("\ufffd", text)  # kept text must be writable as UTF-8


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters (an ellipsis marks a cut). Scrub first."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def scrub_clip(text: str, limit: int = 300, secrets: Iterable[str] = ()) -> str:
    """Scrub, then clip: the one order that cannot leak part of a key."""
    return clip(scrub(text, secrets), limit)


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate (not valid Unicode: it cannot be written as UTF-8)."""
    found = _SURROGATE.search(text)
    return found.start() if found else None


def surrogate_problem(value: Any, where: str = "") -> str | None:
    """Why a parsed record (JSON values) cannot be kept, when a string in it holds a lone surrogate
    (a JSON `\\ud800` escape with no pair): one line naming the field and the position; else None."""
    if isinstance(value, str):
        at = lone_surrogate_at(value)
        if at is None:
            return None
        name = f"'{where}' " if where else ""
        return (
            f"{name}holds a lone surrogate (\\u{ord(value[at]):04x} at character {at + 1}): "
            "not valid Unicode; fix the text (a broken export?)"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            found = surrogate_problem(key, where) or surrogate_problem(item, inner)
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = surrogate_problem(item, f"{where}[{i}]")
            if found:
                return found
    return None


def replace_surrogates(value: Any) -> Any:
    """`value` (str, or lists/dicts of them) with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {replace_surrogates(k): replace_surrogates(v) for k, v in value.items()}
    return value
