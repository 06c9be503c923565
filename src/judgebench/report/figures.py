"""Every figure of a report, keyed as in PLOT_TITLES, each a PNG (bars and heatmap in plots.py,
forest plots in forest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from judgebench.analysis.findings import Analysis
from judgebench.analysis.metric_registry import gate_of
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

__all__ = ["PLOT_TITLES", "make_plots"]

Builder = Callable[["_Inputs"], "Figure | None"]


class _Inputs:
    """What the figures of one analysis are drawn from (the metric index built once for all)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.settings = analysis.settings
        self.index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
        self.conditions = list(analysis.conditions)
        self.subsets = analysis.subsets


def _limit(metric: str, f: _Inputs) -> float:
    """The limit a metric's declared readiness gate sets under the report's settings: the line a
    figure draws is the one the verdict reads (analysis/metric_registry.py)."""
    return gate_of(metric).threshold(f.settings)


FLIP, POSITION = Metric.FLIP_RATE, Metric.POSITION_INCONSISTENCY
INCREASE, STRICT = Metric.POSITION_INCONSISTENCY_INCREASE, Metric.STRICT_ACCURACY

# every figure, in the order the report shows them, and how it is drawn
_BUILDERS: dict[str, Builder] = {
    "accuracy": lambda f: accuracy_plot(f.index, f.conditions),
    "flips": lambda f: flips_plot(f.index, f.conditions, _limit(FLIP, f)),
    "position": lambda f: position_plot(f.index, f.conditions, _limit(POSITION, f)),
    "tie_probe": lambda f: tie_probe_plot(f.index, f.conditions),
    "subset_heatmap": lambda f: heatmap_plot(f.index, f.conditions, f.subsets, _limit(STRICT, f)),
    "forest": lambda f: forest(f.index, f.conditions, f.settings),
    "forest_flips_subsets": lambda f: forest_subsets(f.index, f.conditions, f.subsets, _limit(FLIP, f)),
    "forest_position_subsets": lambda f: forest_subsets(
        f.index, f.conditions, f.subsets, _limit(INCREASE, f), INCREASE
    ),
    PROBES_FOREST: lambda f: probes_forest(f.analysis.probe_rows, _limit(FLIP, f)),
}


def make_plots(analysis: Analysis) -> dict[str, bytes]:
    """Every figure that has data, keyed as in PLOT_TITLES, each a PNG."""
    inputs = _Inputs(analysis)
    drawn = {key: build(inputs) for key, build in _BUILDERS.items()}
    return {key: png(fig) for key, fig in drawn.items() if fig is not None}
