"""Write every report output of a run: metrics.json, metrics.csv, plots/*.png, report.md, report.html.

Each file is written to a temp file and renamed into place, so an interrupted `report` leaves the
previous outputs readable; rerunning it regenerates all of them from the run's judgments.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console

from judgebench import __version__
from judgebench.analysis.model import Analysis
from judgebench.fileio import atomic_write_json, atomic_write_text
from judgebench.records import MetricRecord
from judgebench.report.bbe_section import PLOT_FILE as BBE_PLOT_FILE
from judgebench.report.bbe_section import PLOT_KEY as BBE_PLOT_KEY
from judgebench.report.bbe_section import bbe_section, load_bbe_view
from judgebench.report.explorer import ExplorerData, payload_json
from judgebench.report.figures import PLOT_TITLES, make_plots
from judgebench.report.html import render_html
from judgebench.report.markdown import render_markdown
from judgebench.report.model import ReportMeta
from judgebench.report.sections import build_sections, incomplete_note
from judgebench.report.tables import print_sections
from judgebench.rundir import METRICS_CSV, METRICS_JSON, REPORT_HTML, REPORT_MD, RunDir, now_iso

PLOTS_DIR = "plots"
BASE_COLUMNS: tuple[str, ...] = (
    "judge",
    "metric",
    "condition",
    "subset",
    "filtered",
    "value",
    "n",
    "ci_low",
    "ci_high",
    "p",
)


@dataclass(frozen=True)
class ReportPaths:
    """Where `write_report` put each output (report_html is None with --no-html)."""

    metrics_json: Path
    metrics_csv: Path
    report_md: Path
    report_html: Path | None
    plots: dict[str, Path] = field(default_factory=dict)

    def all(self) -> list[Path]:
        paths = [self.metrics_json, self.metrics_csv, self.report_md, *self.plots.values()]
        return [*paths, self.report_html] if self.report_html is not None else paths


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: a non-finite number is written as null ("does not apply")."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def metric_rows(records: Iterable[MetricRecord]) -> list[dict[str, Any]]:
    """metrics.json records: the INTERFACE fields first, then the extras, in a stable order."""
    rows = []
    for record in records:
        data = _finite(record.model_dump(mode="json"))
        ordered = {k: data.get(k) for k in BASE_COLUMNS}
        ordered.update({k: data[k] for k in sorted(data) if k not in ordered})
        rows.append(ordered)
    return rows


def metrics_csv(rows: list[dict[str, Any]]) -> str:
    extras = sorted({k for row in rows for k in row} - set(BASE_COLUMNS))
    frame = pd.DataFrame(rows, columns=[*BASE_COLUMNS, *extras])
    return frame.to_csv(index=False, lineterminator="\n")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """The binary twin of rundir.atomic_write_text (temp file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_report(
    run: RunDir,
    analysis: Analysis,
    console: Console | None = None,
    *,
    html: bool = True,
    explorer: ExplorerData | None = None,
) -> ReportPaths:
    """Write all outputs into the run folder; with a console, print the terminal tables and the paths.

    With `explorer` (the run's judgments, texts and audit flags), report.html gets the item explorer."""
    run.path.mkdir(parents=True, exist_ok=True)
    rows = metric_rows(analysis.records)
    atomic_write_json(run.file(METRICS_JSON), rows)
    atomic_write_text(run.file(METRICS_CSV), metrics_csv(rows))

    plots = make_plots(analysis)
    plot_dir = run.file(PLOTS_DIR)
    plot_paths: dict[str, Path] = {}
    for key, png in plots.items():
        plot_paths[key] = plot_dir / f"{key}.png"
        atomic_write_bytes(plot_paths[key], png)
    for key in set(PLOT_TITLES) - set(plots):  # a plot of an earlier report whose data is gone
        (plot_dir / f"{key}.png").unlink(missing_ok=True)

    bbe = load_bbe_view(run)  # the run's A-BB as bbe.json holds it (written by `bbe`), if any
    sections = build_sections(analysis, [bbe_section(bbe)])
    meta = ReportMeta(
        run=str(run.path), generated_at=now_iso(), version=__version__, banner=incomplete_note(analysis)
    )
    relative = {key: f"{PLOTS_DIR}/{path.name}" for key, path in plot_paths.items()}
    figures = dict(plots)
    if bbe is not None and bbe.plot is not None:
        relative[BBE_PLOT_KEY] = BBE_PLOT_FILE  # beside report.md, where `bbe` wrote it
        figures[BBE_PLOT_KEY] = bbe.plot
    atomic_write_text(run.file(REPORT_MD), render_markdown(sections, relative, meta))
    html_path: Path | None = None
    if html:
        html_path = run.file(REPORT_HTML)
        payload = payload_json(explorer) if explorer is not None else None
        atomic_write_text(html_path, render_html(sections, figures, meta, payload))

    paths = ReportPaths(
        run.file(METRICS_JSON), run.file(METRICS_CSV), run.file(REPORT_MD), html_path, plot_paths
    )
    if console is not None:
        print_sections(console, sections)
        console.print(f"[bold]Wrote[/] {len(rows):,} metric records and {len(plot_paths)} plot(s):")
        for path in (paths.metrics_json, paths.metrics_csv, paths.report_md, paths.report_html):
            if path is not None:
                console.print(f"  {path}", highlight=False, soft_wrap=True)
    return paths
