"""report.md: GitHub-flavoured Markdown tables, plots referenced as files beside it (plots/*.png)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from judgebench.records.sanitize import visible_controls
from judgebench.report.content import Cell, ReportMeta, Section, Table

# `[`/`]` stay (intervals are "[0.1, 0.2]"); a `(` after `]` is escaped, so no link forms
_MD_SPECIAL = re.compile(r"([\\`*_|]|(?<=\])\()")


def _escape(text: str) -> str:
    """Outside text (a subset name, an item id, a judge's words) as literal Markdown on one line:
    no `|` ends the cell, no `*`/`_`/backtick formats, no `[..](..)` links, no `<tag>` reaches a
    renderer."""
    text = _line(text)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return text.replace("<", "&lt;")  # no tag can open (`->` and `>=` stay as they are)


def _line(text: str) -> str:
    """One line: line breaks of any kind (a lone carriage return too: a viewer may break there and
    read a planted `# heading`) as a space, every other control character as its symbol."""
    return visible_controls(re.sub(r"\s*[\r\n\u2028\u2029\x0b\x0c\x85]+\s*", " ", text))


def _cell(cell: Cell) -> str:
    text = _escape(cell.text)
    if cell.style in ("pass", "fail", "inconclusive"):
        return f"**{text}**"
    if cell.style == "warn" and text:
        return f"*{text}*"
    return text


def table_markdown(table: Table) -> str:
    lines: list[str] = []
    if table.title:
        lines += [f"**{_escape(table.title)}**", ""]
    lines.append("| " + " | ".join(_escape(c) for c in table.columns) + " |")
    lines.append(
        "|"
        + "|".join("---:" if table.alignment(i) == "right" else "---" for i in range(len(table.columns)))
        + "|"
    )
    for row in table.rows:
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    if table.caption:
        lines += ["", f"*{_escape(table.caption)}*"]
    return "\n".join(lines)


def render_markdown(sections: Sequence[Section], plot_paths: Mapping[str, str], meta: ReportMeta) -> str:
    """The whole report; `plot_paths` maps a plot key to its path relative to report.md."""
    out = [
        f"# {_line(meta.title)}",
        "",
        f"Run `{meta.run}` · generated {meta.generated_at} · judgebench {meta.version}",
        "",
        *([f"> {_line(meta.banner)}", ""] if meta.banner else []),
        "Contents: " + " · ".join(f"[{s.title}](#{_anchor(s.title)})" for s in sections),
        "",
    ]
    for section in sections:
        out += [f"## {_line(section.title)}", ""]
        for paragraph in section.paragraphs:  # Markdown already; the data in it made one line
            out += [_line(paragraph), ""]
        if section.empty is not None:
            out += [f"*{section.empty}*", ""]
            continue
        for table in section.tables:
            out += [table_markdown(table), ""]
        for key in section.plots:
            if key in plot_paths:
                out += [f"![{section.title}]({plot_paths[key]})", ""]
    return "\n".join(out).rstrip() + "\n"


def _anchor(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    slug = re.sub(r"[^\w\- ]", "", title.lower())
    return slug.replace(" ", "-")
