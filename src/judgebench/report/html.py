"""report.html: one self-contained file (inline CSS, plots as base64 data URIs, the item explorer's
script and data inline).

It opens from disk, by mail or on an air-gapped machine, and a Content-Security-Policy forbids any
fetch (scripts may only be inline), so a report can never call home or break when a CDN goes away.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from html import escape as _html_escape

from judgebench.records.sanitize import visible_controls
from judgebench.report.content import Cell, ReportMeta, Section, Table
from judgebench.report.explorer import EXPLORER_KEY, EXPLORER_TITLE, explorer_css, explorer_js
from judgebench.report.plots import PLOT_TITLES

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
# with the explorer: inline scripts only; connect-src stays 'none' (default-src), so nothing is fetched
CSP_SCRIPT = CSP + "; script-src 'unsafe-inline'"

CSS = """
:root { --fg: #1d232a; --muted: #6b7280; --line: #e2e5e9; --band: #f6f7f9; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  "Noto Sans", "Noto Sans CJK SC", sans-serif; color: var(--fg); background: #fff; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 28px 64px; }
header h1 { margin: 0 0 4px; font-size: 24px; }
header .meta { color: var(--muted); font-size: 13px; }
nav { margin: 14px 0 8px; padding: 8px 12px; background: var(--band); border-radius: 6px; font-size: 13px; }
nav { display: flex; flex-wrap: wrap; gap: 4px 16px; }
nav a { color: var(--accent); text-decoration: none; white-space: nowrap; }
section { margin-top: 30px; }
h2 { font-size: 19px; border-bottom: 2px solid var(--line); padding-bottom: 4px; margin: 0 0 10px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p { margin: 6px 0; max-width: 95ch; }
p.empty { color: var(--muted); font-style: italic; padding: 8px 12px; background: var(--band);
  border-radius: 6px; }
code { background: var(--band); padding: 0 3px; border-radius: 3px; font-size: 92%; }
.table-wrap { overflow-x: auto; margin: 8px 0 4px; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--band); text-align: left; font-weight: 600; white-space: nowrap; }
td.r, th.r { text-align: right; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fbfbfc; }
td.strong { font-weight: 600; white-space: nowrap; }
td.muted { color: var(--muted); }
td.warn { color: #9a5b00; font-weight: 600; }
td.why { min-width: 380px; }
.caption { color: var(--muted); font-size: 12px; margin: 2px 0 0; }
.banner { background: #fff4e5; border: 2px solid #c05600; color: #5a2a00; padding: 10px 14px;
  border-radius: 6px; margin: 12px 0; font-size: 15px; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-weight: 700; font-size: 12px;
  letter-spacing: .03em; }
.badge.pass { background: #dcf3e3; color: #116329; }
.badge.fail { background: #fbe0e0; color: #a40e26; }
.badge.inconclusive { background: #fff1c9; color: #7a5300; }
details { margin: 10px 0; }
summary { cursor: pointer; font-weight: 600; font-size: 15px; margin: 6px 0; }
figure { margin: 14px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 12px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print { nav { display: none; } section { break-inside: avoid-page; } }
"""


def escape(text: str, quote: bool = True) -> str:
    """HTML-escaped, every control character but the newline shown as its symbol (the one escape
    of report.html's text)."""
    return _html_escape(visible_controls(text, keep="\n"), quote)


def inline_html(text: str) -> str:
    """The sections' **bold** and `code` markup as HTML, everything else escaped."""
    out = escape(text)
    out = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", out)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", out)


def _cell(cell: Cell, align: str, column: str) -> str:
    classes = []
    if align == "right":
        classes.append("r")
    if column == "Why":
        classes.append("why")
    if cell.style in ("pass", "fail", "inconclusive"):
        body = f'<span class="badge {cell.style}">{escape(cell.text)}</span>'
    else:
        body = escape(cell.text).replace("\n", "<br>")
        if cell.style is not None:
            classes.append(cell.style)
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{cls}>{body}</td>"


def table_html(table: Table) -> str:
    parts = []
    if table.collapsed:
        title = escape(table.title or "Table")
        parts.append(f"<details><summary>{title} ({len(table.rows)} rows)</summary>")
    elif table.title:
        parts.append(f"<h3>{escape(table.title)}</h3>")
    head = "".join(
        f"<th{' class=r' if table.alignment(i) == 'right' else ''}>{escape(c)}</th>"
        for i, c in enumerate(table.columns)
    )
    body = "\n".join(
        "<tr>" + "".join(_cell(c, table.alignment(i), table.columns[i]) for i, c in enumerate(row)) + "</tr>"
        for row in table.rows
    )
    table_tag = f"<table><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"
    parts.append(f'<div class="table-wrap">{table_tag}</div>')
    if table.caption:
        parts.append(f'<p class="caption">{escape(table.caption)}</p>')
    if table.collapsed:
        parts.append("</details>")
    return "\n".join(parts)


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


EXPLORER_INTRO = (
    "One row per item and judge: the verdict in each condition for the original order and the swapped "
    "one (1 or 2: the output preferred; green when it is the gold one, red when not). An orange cell "
    "flipped (its verdict differs from en in some order); a dashed cell is position-inconsistent "
    "(orig and swap differ). Filter, sort by a column heading, search ids and texts; click a row for "
    "the instruction and both outputs in every condition, the raw answers and parse errors. With a "
    "condition chosen, the flipped, inconsistent and audit filters look at that condition only; "
    "<i>wrong in en only</i> keeps rows wrong in en (in some order) and right in every valid target "
    "verdict. The view is kept in the address (e.g. <code>#explorer?flipped=1&amp;judge=...</code>) "
    "to share or bookmark."
)


def explorer_html(payload: str) -> str:
    """The explorer section: an empty container the inlined script fills from the inlined JSON."""
    return (
        f'<section id="{EXPLORER_KEY}"><h2>{EXPLORER_TITLE}</h2>\n<p>{EXPLORER_INTRO}</p>\n'
        f'<div id="jbx" class="jbx"><p class="empty">The item explorer needs JavaScript.</p></div>\n'
        f'<script type="application/json" id="jbx-data">{payload}</script>\n'
        f"<script>{explorer_js()}</script>\n</section>"
    )


def render_html(
    sections: Sequence[Section],
    plots: Mapping[str, bytes],
    meta: ReportMeta,
    explorer: str | None = None,
) -> str:
    """The whole report as one HTML document; `plots` maps a plot key to its PNG bytes; `explorer` is
    the item explorer's JSON payload (report.explorer.payload_json), or None for no explorer."""
    nav = "".join(f'<a href="#{escape(s.key)}">{escape(s.title)}</a>' for s in sections)
    if explorer is not None:
        nav += f'<a href="#{EXPLORER_KEY}">{EXPLORER_TITLE}</a>'
    body: list[str] = []
    for section in sections:
        parts = [f'<section id="{escape(section.key)}">', f"<h2>{escape(section.title)}</h2>"]
        parts += [f"<p>{inline_html(p)}</p>" for p in section.paragraphs]
        if section.empty is not None:
            parts.append(f'<p class="empty">{escape(section.empty)}</p>')
        else:
            parts += [table_html(t) for t in section.tables]
            for key in section.plots:
                if key in plots:
                    title = escape(PLOT_TITLES.get(key, section.title))
                    parts.append(
                        f'<figure id="plot-{escape(key)}"><img alt="{title}" src="{data_uri(plots[key])}">'
                        f"<figcaption>{title}</figcaption></figure>"
                    )
        parts.append("</section>")
        body.append("\n".join(parts))
    css, csp = CSS, CSP
    if explorer is not None:
        body.append(explorer_html(explorer))
        css, csp = CSS + explorer_css(), CSP_SCRIPT
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(meta.title)}: {escape(meta.run)}</title>
<style>{css}</style>
</head>
<body>
<main>
<header>
<h1>{escape(meta.title)}</h1>
<div class="meta">Run <code>{escape(meta.run)}</code> · generated {escape(meta.generated_at)} ·
judgebench {escape(meta.version)}</div>
</header>
{f'<div class="banner" role="alert">{inline_html(meta.banner)}</div>' if meta.banner else ""}
<nav>{nav}</nav>
{chr(10).join(body)}
<footer>Made by judgebench {escape(meta.version)}. Every number here is in metrics.json with its n,
interval and method.</footer>
</main>
</body>
</html>
"""
