"""The report of an Analysis: its sections as plain data, and the registered file outputs made from them
(metrics.json/csv, report.md, plots, a self-contained report.html; `outputs.py` is the registry).

The numbers come from `judgebench.analysis`; this package only lays them out. `sections` is the one
place that decides what is shown and in which order, so every output agrees.
"""

from __future__ import annotations

from judgebench.report.content import ReportMeta, Section, Table
from judgebench.report.figures import PLOT_TITLES, make_plots
from judgebench.report.html import render_html
from judgebench.report.markdown_render import render_markdown
from judgebench.report.report_sections import build_sections
from judgebench.report.rows import metric_rows
from judgebench.report.writer import ReportPaths, write_report

__all__ = [
    "PLOT_TITLES",
    "ReportMeta",
    "ReportPaths",
    "Section",
    "Table",
    "build_sections",
    "make_plots",
    "metric_rows",
    "render_html",
    "render_markdown",
    "write_report",
]
