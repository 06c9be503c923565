"""Outside text made safe to keep: secrets masked (before any cut), lone surrogates replaced, long
text clipped with its original size known.

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
    "surrogate_problem",
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
