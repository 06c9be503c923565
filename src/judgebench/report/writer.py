"""Write every report output of a run: the registered outputs (`outputs.py`) rendered and written as
one set. The built-in ones are registered here: metrics.json, metrics.csv, report.md, plots/*.png,
self_preference.json (README), report.html (INTERFACE.md).

Every file is rendered first, then all are written by temp file and rename together
(`atomic_write_many`), so a killed `report` leaves the previous set readable and never a new
metrics.json beside an old report; rerunning it regenerates all of them from the run's judgments.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from judgebench.analysis.findings import Analysis
from judgebench.human import HumanReport
from judgebench.report.content import Section
from judgebench.report.explorer import ExplorerData, payload_json
from judgebench.report.figures import PLOT_TITLES
from judgebench.report.html import render_html
from judgebench.report.human_section import HUMAN_JSON
from judgebench.report.markdown_render import render_markdown
from judgebench.report.output_formats import (
    PLOTS_DIR,
    Need,
    OutputInputs,
    ReportInputs,
    ReportOutput,
    register,
    register_output,
    selected,
)
from judgebench.report.rows import BASE_COLUMNS, metric_rows, metrics_csv, metrics_json
from judgebench.report.self_preference_section import SELF_PREFERENCE_JSON, self_preference_json
from judgebench.store.atomic_files import atomic_write_many, remove_stale_temps
from judgebench.store.run_folder import (
    METRICS_CSV,
    METRICS_JSON,
    READINESS_JSON,
    REPORT_HTML,
    REPORT_MD,
    RunDir,
)

__all__ = ["BASE_COLUMNS", "PLOTS_DIR", "ReportPaths", "metric_rows", "metrics_csv", "write_report"]


@register_output("json", METRICS_JSON, needs=[Need.ROWS])
def _metrics_json(inputs: OutputInputs) -> bytes:
    return metrics_json(inputs.rows).encode("utf-8")


@register_output("csv", METRICS_CSV, needs=[Need.ROWS])
def _metrics_csv(inputs: OutputInputs) -> bytes:
    return metrics_csv(inputs.rows).encode("utf-8")


@register_output("md", REPORT_MD, needs=[Need.SECTIONS, Need.FIGURES])
def _report_md(inputs: OutputInputs) -> bytes:
    return render_markdown(inputs.sections, inputs.figure_links(), inputs.meta).encode("utf-8")


def _plots(inputs: OutputInputs) -> dict[str, bytes]:
    return {f"{PLOTS_DIR}/{key}.png": png for key, png in inputs.plots.items()}


# the figures have no data in some runs: a plot an earlier report wrote is then removed
register(
    ReportOutput(
        "plots",
        PLOTS_DIR,
        _plots,
        frozenset({Need.FIGURES}),
        owns=tuple(f"{PLOTS_DIR}/{key}.png" for key in PLOT_TITLES),
    )
)


@register_output("self_preference", SELF_PREFERENCE_JSON, needs=[])
def _self_preference_json(inputs: OutputInputs) -> bytes:
    return self_preference_json(inputs.analysis)


@register_output("html", REPORT_HTML, needs=[Need.SECTIONS, Need.FIGURES, Need.EXPLORER])
def _report_html(inputs: OutputInputs) -> bytes:
    payload = payload_json(inputs.explorer) if inputs.explorer is not None else None
    return render_html(inputs.sections, inputs.figures(), inputs.meta, payload).encode("utf-8")


def _human_json(inputs: OutputInputs) -> dict[str, bytes]:
    """human.json (README "Human labels"): written with --human; a report without it removes an
    earlier one, so the folder never holds human numbers beside metrics that lack them."""
    human = inputs.human
    if human is None:
        return {}
    return {HUMAN_JSON: (human.model_dump_json(indent=2) + "\n").encode("utf-8")}


register(ReportOutput("human", HUMAN_JSON, _human_json, frozenset({Need.HUMAN}), owns=(HUMAN_JSON,)))


def _readiness_json(inputs: OutputInputs) -> dict[str, bytes]:
    """readiness.json (INTERFACE.md): the document `api.report` built (it knows the judges' stops);
    a direct `write_report` without one writes none and leaves an earlier one alone."""
    doc = inputs.readiness
    if doc is None:
        return {}
    text = json.dumps(doc.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"
    return {READINESS_JSON: text.encode("utf-8")}


register(ReportOutput("readiness", READINESS_JSON, _readiness_json, frozenset({Need.READINESS})))


@dataclass(frozen=True)
class ReportPaths:
    """Where `write_report` put each output (output name -> its files, in registration order), and
    the report as data: the CLI prints its terminal sections as the summary."""

    files: dict[str, list[Path]]
    plots: dict[str, Path] = field(default_factory=dict)  # plot key -> its PNG
    sections: list[Section] = field(default_factory=list)

    def get(self, name: str) -> Path | None:
        """The (first) file of an output; None when it was left out."""
        written = self.files.get(name)
        return written[0] if written else None

    def _one(self, name: str) -> Path:
        path = self.get(name)
        if path is None:
            raise KeyError(f"the report output {name!r} was not written")
        return path

    @property
    def metrics_json(self) -> Path:
        return self._one("json")

    @property
    def metrics_csv(self) -> Path:
        return self._one("csv")

    @property
    def report_md(self) -> Path:
        return self._one("md")

    @property
    def report_html(self) -> Path | None:  # None with --no-html
        return self.get("html")

    def all(self) -> list[Path]:
        return [path for paths in self.files.values() for path in paths]


def write_report(
    run: RunDir,
    analysis: Analysis,
    *,
    html: bool = True,
    explorer: ExplorerData | None = None,
    leave_out: Collection[str] = (),
    human: HumanReport | None = None,
    readiness: BaseModel | None = None,
) -> ReportPaths:
    """Write every registered output (less `leave_out`; `html=False` leaves out report.html) into the
    run folder. Nothing is printed: the CLI renders the returned sections.

    With `explorer` (the run's judgments, texts and audit flags), report.html gets the item explorer;
    with `human` (`report --human FILE`), every format gets the human section and human.json is written;
    with `readiness` (api.report's ReadinessDoc), readiness.json is written with the set."""
    chosen = selected({*leave_out, *(() if html else ("html",))})
    run.path.mkdir(parents=True, exist_ok=True)
    folders = {run.path} | {run.file(f).parent for out in chosen for f in (*out.owns, out.file)}
    for folder in sorted(folders):  # what a killed report left (the caller holds the lock)
        remove_stale_temps(folder)
    inputs = ReportInputs(run, analysis, explorer=explorer, human=human, readiness=readiness)
    rendered = {out.name: out.render(OutputInputs(out.name, inputs, out.needs)) for out in chosen}
    atomic_write_many({run.file(rel): data for files in rendered.values() for rel, data in files.items()})
    for out in chosen:
        for rel in set(out.owns) - set(rendered[out.name]):  # an earlier report's file whose data is gone
            run.file(rel).unlink(missing_ok=True)

    files = {name: [run.file(rel) for rel in written] for name, written in rendered.items()}
    plots = {Path(rel).stem: run.file(rel) for rel in rendered.get("plots", {})}
    return ReportPaths(files, plots, inputs.sections)
