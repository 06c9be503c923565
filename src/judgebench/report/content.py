"""The report's content model: sections of tables and paragraphs, as plain data.

Terminal, Markdown and HTML renderers all draw from this model, so the three outputs cannot disagree
on a number, an order or a label; each renderer only decides how a cell looks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Style = Literal["pass", "fail", "inconclusive", "warn", "muted", "strong"]
Align = Literal["left", "right"]

DASH = "—"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and an optional semantic style the renderer maps to colour."""

    text: str
    style: Style | None = None
    # the terminal's shorter form: a value without its interval, a verdict's deciding reasons only
    short: str | None = None


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Cell]]
    title: str | None = None
    caption: str | None = None
    left: int = 1  # leading text columns, left-aligned; the rest are numbers, right-aligned
    terminal: bool = True  # printed in the terminal summary
    collapsed: bool = False  # a long detail table the HTML folds away (<details>) until clicked
    # columns the terminal drops to stay narrow (bootstrap intervals, counts); the files keep them
    detail_columns: frozenset[str] = frozenset()
    # columns the terminal shows without their interval (Cell.short)
    short_columns: frozenset[str] = frozenset()
    # the caption the terminal prints instead, where its short cells need saying so
    terminal_caption: str | None = None

    def alignment(self, index: int) -> Align:
        return "left" if index < self.left else "right"


@dataclass
class Section:
    """A report section. `empty` says why a section has no numbers ("not measured ...").

    Paragraphs use two bits of markup every renderer understands: **bold** and `code`.
    """

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    empty: str | None = None
    terminal: bool = True  # shown in the terminal summary (the files always hold every section)
    terminal_paragraphs: bool = False  # its paragraphs are warnings worth printing there too


def literal(text: str) -> str:
    """Outside text (a judge's name, an item id) inside a paragraph, as a code span: Markdown reads
    no emphasis, link or HTML tag in code, and the HTML renderer escapes it before marking it up."""
    return "`" + " ".join(text.replace("`", "'").split()) + "`"


@dataclass(frozen=True)
class ReportMeta:
    """Where and when a report was made, shown in its header."""

    run: str
    generated_at: str
    version: str
    title: str = "judgebench report"
    # a warning shown above everything (an incomplete run), in every format
    banner: str | None = None
