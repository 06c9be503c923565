"""`judgebench report` in the terminal: the report's sections (plain data from the library) as compact
rich tables, the verdict first, then the headline numbers, then where the files went.

The per-subset and sensitivity tables stay in report.md / report.html; the terminal gets what a user
reads before opening them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

if TYPE_CHECKING:
    from judgebench.api import ReportCell as Cell
    from judgebench.api import ReportResult
    from judgebench.api import ReportSection as Section
    from judgebench.api import ReportTable as Table

RICH_STYLES: dict[str, str] = {
    "pass": "bold green",
    "fail": "bold red",
    "inconclusive": "bold yellow",
    "warn": "yellow",
    "muted": "dim",
    "strong": "bold",
}


def inline_markup(text: str) -> str:
    """The sections' **bold** and `code` as rich markup, everything else escaped."""
    out = escape(text)
    out = re.sub(r"\*\*(.+?)\*\*", r"[bold]\1[/bold]", out)
    return re.sub(r"`(.+?)`", r"[cyan]\1[/cyan]", out)


def rich_table(table: Table, title: str | None = None, *, compact: bool = True) -> RichTable:
    """A section table as a rich Table; `compact` drops the table's detail columns (bootstrap, counts)."""
    keep = [i for i, c in enumerate(table.columns) if not (compact and c in table.detail_columns)]
    rich = RichTable(
        title=title or table.title,
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        caption=(table.terminal_caption or table.caption) if compact else table.caption,
        caption_justify="left",
    )
    for i in keep:
        column = table.columns[i]
        # the verdict's reasons are prose: let that column wrap instead of squeezing the numbers
        rich.add_column(
            column,
            justify=table.alignment(i),
            overflow="fold",
            ratio=3 if column == "Why" else None,
            no_wrap=column != "Why" and i < 2,
        )
    for row in table.rows:
        short = {i for i in keep if compact and table.columns[i] in table.short_columns}
        rich.add_row(*[_cell(row[i], short=i in short) for i in keep])
    return rich


def _cell(cell: Cell, *, short: bool = False) -> str:
    raw = cell.short if short and cell.short is not None else cell.text
    # an interval never breaks inside itself: a narrow terminal wraps it whole below its value
    text = escape(raw.replace(", ", ",\u00a0") if raw.endswith("]") else raw)
    return f"[{RICH_STYLES[cell.style]}]{text}[/]" if cell.style else text


def print_sections(console: Console, sections: Sequence[Section], *, everything: bool = False) -> None:
    """Print the terminal sections (or every section) as rich tables; empty ones as one dim line."""
    for section in sections:
        if not (section.terminal or everything):
            continue
        if section.empty is not None:
            console.print(f"[bold]{escape(section.title)}[/]: [dim]{escape(section.empty)}[/]")
            console.print()
            continue
        tables = [t for t in section.tables if t.terminal or everything]
        for i, table in enumerate(tables):
            title = section.title if i == 0 and table.title is None else None
            if i == 0 and table.title is not None:
                title = f"{section.title}: {table.title}"
            console.print(rich_table(table, title, compact=not everything))
        if section.terminal_paragraphs or everything:
            for paragraph in section.paragraphs:
                console.print(inline_markup(paragraph), style="dim")
        console.print()


def print_report(console: Console, result: ReportResult, export_unstable: Path | None = None) -> None:
    """The terminal summary of a written report, then each file it wrote (the plots counted)."""
    print_sections(console, result.paths.sections)
    plots = len(result.paths.plots)
    console.print(f"[bold]Wrote[/] {len(result.analysis.records):,} metric records and {plots} plot(s):")
    for name, files in result.paths.files.items():
        for path in files if name != "plots" else ():
            console.print(f"  {path}", highlight=False, soft_wrap=True, markup=False)
    if export_unstable is not None and result.unstable is not None:
        console.print(
            f"[bold]Wrote[/] {result.unstable:,} flipped or position-inconsistent item x judge row(s) to",
            highlight=False,
        )
        console.print(f"  {export_unstable}", highlight=False, soft_wrap=True)
