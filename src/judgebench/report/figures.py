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
        self.index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
        self.conditions = list(analysis.conditions)

    def draw(self, key: str) -> bytes | None:
        """The PNG of figure `key` (one of FIGURE_KEYS), None when it has no data."""
        fig = self._builders()[key]()
        return png(fig) if fig is not None else None

    def _builders(self) -> dict[str, Callable[[], Figure | None]]:
        analysis, index, conditions = self.analysis, self.index, self.conditions
        settings = analysis.settings
        return {
            "accuracy": lambda: accuracy_plot(index, conditions),
            "flips": lambda: flips_plot(index, conditions, settings.max_flip_rate),
            # the limit the readiness baseline reads (analysis/readiness.py), from the same settings
            "position": lambda: position_plot(index, conditions, settings.max_position_inconsistency),
            "tie_probe": lambda: tie_probe_plot(index, conditions),
            "subset_heatmap": lambda: heatmap_plot(index, conditions, analysis.subsets, settings.chance),
            "forest": lambda: forest(index, conditions, settings),
            "forest_flips_subsets": lambda: forest_subsets(
                index, conditions, analysis.subsets, settings.max_flip_rate
            ),
            "forest_position_subsets": lambda: forest_subsets(
                index,
                conditions,
                analysis.subsets,
                settings.max_position_increase,
                Metric.POSITION_INCONSISTENCY_INCREASE,
            ),
            PROBES_FOREST: lambda: probes_forest(analysis.probe_rows, settings.max_flip_rate),
        }


# every figure, in the order the report shows them
FIGURE_KEYS: tuple[str, ...] = (
    "accuracy",
    "flips",
    "position",
    "tie_probe",
    "subset_heatmap",
    "forest",
    "forest_flips_subsets",
    "forest_position_subsets",
    PROBES_FOREST,
)
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
