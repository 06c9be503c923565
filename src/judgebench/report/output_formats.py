"""The report's file outputs as a registry: a name -> the file it writes, what it reads, how it renders.

Adding an output format is one `register_output` (the built-in ones are registered in `writer.py`; a
test registers its own the same way); another package adds one without editing judgebench through
the entry-point group `judgebench.outputs` (`name = "pkg.module:OUTPUT"`, a `ReportOutput`).
`write_report` renders every output from one `ReportInputs` and writes the set together. Each part of
the inputs (rows, figures, sections, the item explorer) is made once, and only when an output
declared it needs it. The terminal summary is not a file: it is the sections' data
(`ReportPaths.summary`) that the CLI prints.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, cached_property
from typing import Any

from pydantic import BaseModel

from judgebench import __version__
from judgebench.analysis.findings import Analysis
from judgebench.errors import JudgebenchError
from judgebench.human import HumanReport
from judgebench.plugins import declared
from judgebench.records.clock import now_iso
from judgebench.report.bbe_section import PLOT_FILE as BBE_PLOT_FILE
from judgebench.report.bbe_section import PLOT_KEY as BBE_PLOT_KEY
from judgebench.report.bbe_section import BBEView, bbe_section, load_bbe_view
from judgebench.report.content import ReportMeta, Section
from judgebench.report.explorer import ExplorerData
from judgebench.report.figures import make_plots
from judgebench.report.human_section import human_section
from judgebench.report.report_sections import build_sections, incomplete_note
from judgebench.report.rows import metric_rows
from judgebench.report.selective_section import PLOT as SELECTIVE_PLOT_KEY
from judgebench.report.selective_section import PLOT_FILE as SELECTIVE_PLOT_FILE
from judgebench.report.selective_section import SelectiveView, load_selective_view, report_section
from judgebench.report.self_preference_section import self_preference_section
from judgebench.store.run_folder import RunDir

PLOTS_DIR = "plots"


class Need(StrEnum):
    """What an output reads; each is made once per report, and only if some output needs it."""

    ROWS = "rows"  # metrics.json's rows: the records, INTERFACE fields first, JSON-safe
    FIGURES = "figures"  # the report's plots as PNGs (matplotlib: the costly part)
    SECTIONS = "sections"  # the report as data: sections (with bbe.json's), their meta
    EXPLORER = "explorer"  # the item explorer's data, when the caller read it (None otherwise)
    HUMAN = "human"  # the human-label analysis (`report --human FILE`), when the caller made one
    READINESS = "readiness"  # readiness.json's document (api builds it with the judges' stops), if given


class ReportInputs:
    """Everything an output may read, each part made at most once and only when first asked for."""

    def __init__(
        self,
        run: RunDir,
        analysis: Analysis,
        *,
        explorer: ExplorerData | None = None,
        human: HumanReport | None = None,
        readiness: BaseModel | None = None,
    ) -> None:
        self.run = run
        self.analysis = analysis
        self.explorer_data = explorer
        self.human = human
        self.readiness = readiness

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        return metric_rows(self.analysis.records)

    @cached_property
    def plots(self) -> dict[str, bytes]:
        """The report's own figures that have data, keyed as in PLOT_TITLES."""
        return make_plots(self.analysis)

    @cached_property
    def bbe(self) -> BBEView | None:
        return load_bbe_view(self.run)  # the run's A-BB as bbe.json holds it (written by `bbe`), if any

    @cached_property
    def selective(self) -> SelectiveView | None:
        return load_selective_view(self.run)  # written by `judgebench selective`, if it ran here

    @cached_property
    def sections(self) -> list[Section]:
        human = human_section(self.human)
        selective = report_section(self.selective)
        extra = [self_preference_section(self.analysis), bbe_section(self.bbe), *([human] if human else [])]
        return build_sections(self.analysis, [*extra, *([selective] if selective else [])])

    @cached_property
    def meta(self) -> ReportMeta:
        banner = incomplete_note(self.analysis)
        return ReportMeta(run=str(self.run.path), generated_at=now_iso(), version=__version__, banner=banner)

    def figure_links(self) -> dict[str, str]:
        """Each figure's path relative to the run folder (report.md links them)."""
        links = {key: f"{PLOTS_DIR}/{key}.png" for key in self.plots}
        if self.bbe is not None and self.bbe.plot is not None:
            links[BBE_PLOT_KEY] = BBE_PLOT_FILE  # beside report.md, where `bbe` wrote it
        if self.selective is not None and self.selective.plot is not None:
            links[SELECTIVE_PLOT_KEY] = SELECTIVE_PLOT_FILE  # beside report.md, where `selective` wrote it
        return links

    def figures(self) -> dict[str, bytes]:
        """Each figure's PNG, the run's bbe.png included (report.html embeds them)."""
        out = dict(self.plots)
        if self.bbe is not None and self.bbe.plot is not None:
            out[BBE_PLOT_KEY] = self.bbe.plot
        if self.selective is not None and self.selective.plot is not None:
            out[SELECTIVE_PLOT_KEY] = self.selective.plot
        return out


class UndeclaredNeed(JudgebenchError):
    """An output read a part of the inputs it did not declare (a bug in its registration)."""


class OutputInputs:
    """One output's window on the inputs: only the parts its registration declared."""

    def __init__(self, name: str, inputs: ReportInputs, needs: frozenset[Need]) -> None:
        self._name, self._inputs, self._needs = name, inputs, needs

    def _get(self, need: Need) -> ReportInputs:
        if need not in self._needs:
            raise UndeclaredNeed(f"report output {self._name!r} reads {need.value} without declaring it")
        return self._inputs

    @property
    def analysis(self) -> Analysis:
        return self._inputs.analysis

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self._get(Need.ROWS).rows

    @property
    def plots(self) -> dict[str, bytes]:
        return self._get(Need.FIGURES).plots

    def figure_links(self) -> dict[str, str]:
        return self._get(Need.FIGURES).figure_links()

    def figures(self) -> dict[str, bytes]:
        return self._get(Need.FIGURES).figures()

    @property
    def sections(self) -> list[Section]:
        return self._get(Need.SECTIONS).sections

    @property
    def meta(self) -> ReportMeta:
        return self._get(Need.SECTIONS).meta

    @property
    def explorer(self) -> ExplorerData | None:
        return self._get(Need.EXPLORER).explorer_data

    @property
    def human(self) -> HumanReport | None:
        return self._get(Need.HUMAN).human

    @property
    def readiness(self) -> BaseModel | None:
        return self._get(Need.READINESS).readiness


Render = Callable[[OutputInputs], dict[str, bytes]]


@dataclass(frozen=True)
class ReportOutput:
    """One registered output: `render` returns its files (paths relative to the run folder)."""

    name: str
    file: str  # its file in the run folder; for a set of files (the plots), their folder
    render: Render
    needs: frozenset[Need]
    owns: tuple[str, ...] = ()  # every file it may write: those not written this time are removed


OUTPUTS: dict[str, ReportOutput] = {}  # in registration order, which is the order they are listed


def register(output: ReportOutput) -> ReportOutput:
    if output.name in OUTPUTS:
        raise ValueError(f"report output {output.name!r} is registered twice")
    OUTPUTS[output.name] = output
    return output


def register_output(
    name: str, file: str, *, needs: Iterable[Need]
) -> Callable[[Callable[[OutputInputs], bytes]], Callable[[OutputInputs], bytes]]:
    """`@register_output("tsv", "metrics.tsv", needs=[Need.ROWS])` over a function returning the
    file's bytes: the one step that adds an output format."""

    def add(fn: Callable[[OutputInputs], bytes]) -> Callable[[OutputInputs], bytes]:
        register(ReportOutput(name, file, lambda inputs: {file: fn(inputs)}, frozenset(needs)))
        return fn

    return add


def unregister(name: str) -> None:
    OUTPUTS.pop(name, None)


PLUGIN_GROUP = "judgebench.outputs"


@cache
def _plugins() -> dict[str, ReportOutput]:
    """The outputs other packages declare in the entry-point group `judgebench.outputs` (read once):
    each names a `ReportOutput`; a name clash or another object is an error naming the entry point."""
    return declared(PLUGIN_GROUP, ReportOutput, lambda output: output.name, OUTPUTS, "report output")


def available() -> dict[str, ReportOutput]:
    """Every output, by name: those registered here (in registration order), then the plugins'."""
    return {**OUTPUTS, **_plugins()}


def selected(leave_out: Collection[str] = ()) -> list[ReportOutput]:
    """The registered outputs less those left out (`--no-html` leaves out "html")."""
    known = available()
    unknown = set(leave_out) - set(known)
    if unknown:
        raise ValueError(f"no report output named {sorted(unknown)}; known: {sorted(known)}")
    return [out for name, out in known.items() if name not in leave_out]


def needs_of(leave_out: Collection[str] = ()) -> frozenset[Need]:
    """What the selected outputs read, together: a caller reads the explorer's data only if needed."""
    return frozenset(need for out in selected(leave_out) for need in out.needs)
