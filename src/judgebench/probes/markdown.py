"""Markdown to plain text, deterministically, keeping every word (the `format` probe).

Line by line: headings, emphasis, inline code, links, images, block quotes, bullets, rules and
table separators lose their markup; the words, numbers, code and URLs stay. Fenced code keeps its
lines and loses its fences. Numbered lists keep their numbers (they are plain text too).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_QUOTE = re.compile(r"^\s*(>\s?)+")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(\[[ xX]\]\s+)?")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)[^)]*\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDER = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_CODE = re.compile(r"`([^`\n]+)`")


def _inline(line: str) -> str:
    line = _IMAGE.sub(lambda m: m.group(1) or m.group(2), line)
    line = _LINK.sub(
        lambda m: m.group(1) if m.group(1) == m.group(2) else f"{m.group(1)} ({m.group(2)})", line
    )
    line = _CODE.sub(r"\1", line)
    line = _BOLD.sub(r"\2", line)
    line = _STRIKE.sub(r"\1", line)
    line = _ITALIC_STAR.sub(r"\1", line)
    return _ITALIC_UNDER.sub(r"\1", line)


def _table_row(line: str) -> str:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return ", ".join(c for c in cells if c)


def strip_markdown(text: str) -> str:
    """The same text as plain text (see the module docstring); a text without markup is returned
    unchanged."""
    out: list[str] = []
    in_code = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            out.append(line)
            continue
        if _RULE.match(line) or (_TABLE_SEP.match(line) and "|" in line):
            continue
        heading = _HEADING.match(line)
        if heading:
            line = heading.group(1)
        line = _QUOTE.sub("", line)
        line = _BULLET.sub(r"\1", line)
        if line.strip().startswith("|") and line.strip().endswith("|"):
            line = _table_row(line)
        out.append(_inline(line))
    return "\n".join(out)
