"""Every figure of a report, keyed as in PLOT_TITLES, each a PNG (bars and heatmap in plots.py,
forest plots in forest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from judgebench.analysis.model import Analysis
from judgebench.records import Metric
from judgebench.report.forest import forest, forest_subsets
from judgebench.report.index import MetricIndex
from judgebench.report.plots import (
    PLOT_TITLES,
    accuracy_plot,
    flips_plot,
    heatmap_plot,
    png,
    position_plot,
    tie_probe_plot,
)
from judgebench.report.probe_section import PROBES_FOREST, probes_forest

if TYPE_CHECKING:  # matplotlib loads where a figure is drawn (plots.py)
    from matplotlib.figure import Figure

__all__ = ["DRAW_ORDER", "FIGURE_KEYS", "PLOT_TITLES", "FigureSet", "make_plots"]


class FigureSet:
    """The figures of one analysis, drawable one at a time (so that two processes can share them)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.settings = analysis.settings
        self.index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
        self.conditions = list(analysis.conditions)
        self.subsets = analysis.subsets

    def draw(self, key: str) -> bytes | None:
        """The PNG of figure `key` (one of FIGURE_KEYS), None when it has no data."""
        fig = _BUILDERS[key](self)
        return png(fig) if fig is not None else None


Builder = Callable[["FigureSet"], "Figure | None"]

# every figure, in the order the report shows them, and how it is drawn from a FigureSet
_BUILDERS: dict[str, Builder] = {
    "accuracy": lambda f: accuracy_plot(f.index, f.conditions),
    "flips": lambda f: flips_plot(f.index, f.conditions, f.settings.max_flip_rate),
    # the limit the readiness baseline reads (analysis/readiness.py), from the same settings
    "position": lambda f: position_plot(f.index, f.conditions, f.settings.max_position_inconsistency),
    "tie_probe": lambda f: tie_probe_plot(f.index, f.conditions),
    "subset_heatmap": lambda f: heatmap_plot(f.index, f.conditions, f.subsets, f.settings.chance),
    "forest": lambda f: forest(f.index, f.conditions, f.settings),
    "forest_flips_subsets": lambda f: forest_subsets(
        f.index, f.conditions, f.subsets, f.settings.max_flip_rate
    ),
    "forest_position_subsets": lambda f: forest_subsets(
        f.index,
        f.conditions,
        f.subsets,
        f.settings.max_position_increase,
        Metric.POSITION_INCONSISTENCY_INCREASE,
    ),
    PROBES_FOREST: lambda f: probes_forest(f.analysis.probe_rows, f.settings.max_flip_rate),
}
FIGURE_KEYS: tuple[str, ...] = tuple(_BUILDERS)


# the order two processes take them in: the costliest first (the panels of every subset, or of every
# target), so that the last one taken is short and neither waits long for the other
DRAW_ORDER: tuple[str, ...] = (
    "subset_heatmap",
    "forest_flips_subsets",
    "forest_position_subsets",
    PROBES_FOREST,
    "forest",
    "accuracy",
    "flips",
    "position",
    "tie_probe",
)


def in_report_order(drawn: dict[str, bytes | None]) -> dict[str, bytes]:
    """The figures that have data, keyed as in PLOT_TITLES, in the report's order."""
    return {key: image for key in FIGURE_KEYS if (image := drawn.get(key)) is not None}


def make_plots(analysis: Analysis) -> dict[str, bytes]:
    """Every figure that has data, keyed as in PLOT_TITLES, each a PNG."""
    figures = FigureSet(analysis)
    return in_report_order({key: figures.draw(key) for key in FIGURE_KEYS})
