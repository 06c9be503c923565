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

__all__ = ["PLOT_TITLES", "make_plots"]


def make_plots(analysis: Analysis) -> dict[str, bytes]:
    """Every figure that has data, keyed as in PLOT_TITLES, each a PNG."""
    index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
    conditions = list(analysis.conditions)
    out: dict[str, bytes] = {}
    builders: dict[str, Callable[[], Figure | None]] = {
        "accuracy": lambda: accuracy_plot(index, conditions),
        "flips": lambda: flips_plot(index, conditions, analysis.settings.max_flip_rate),
        # the limit the readiness baseline reads (analysis/readiness.py), from the same settings
        "position": lambda: position_plot(index, conditions, analysis.settings.max_position_inconsistency),
        "tie_probe": lambda: tie_probe_plot(index, conditions),
        "subset_heatmap": lambda: heatmap_plot(index, conditions, analysis.subsets, analysis.settings.chance),
        "forest": lambda: forest(index, conditions, analysis.settings),
        "forest_flips_subsets": lambda: forest_subsets(
            index, conditions, analysis.subsets, analysis.settings.max_flip_rate
        ),
        "forest_position_subsets": lambda: forest_subsets(
            index,
            conditions,
            analysis.subsets,
            analysis.settings.max_position_increase,
            Metric.POSITION_INCONSISTENCY_INCREASE,
        ),
        PROBES_FOREST: lambda: probes_forest(analysis.probe_rows, analysis.settings.max_flip_rate),
    }
    for key, build in builders.items():
        fig = build()
        if fig is not None:
            out[key] = png(fig)
    return out
