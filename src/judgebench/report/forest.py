"""Forest plots: the readiness quantities per judge and target (and each of them per subset), each
with the interval readiness judges by and its limit, so several judges compare at a glance. Which
quantities, with which limit: the pair metrics declared with an invariance gate
(analysis/metric_registry.py), so a registered one gets its panel too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from judgebench.analysis.findings import SOURCE, ReportSettings
from judgebench.analysis.metric_registry import MetricSpec, gate_of, gated, spec_of
from judgebench.analysis.small_n import decisive
from judgebench.analysis.subsets import leaf_subsets
from judgebench.records import ConditionPair, Metric, MetricRecord
from judgebench.report.index import MetricIndex
from judgebench.report.plots import (
    CHANCE_GREY,
    LIMIT_RED,
    MAX_WIDTH,
    figure,
    judge_label,
    judge_palette,
    line_handle,
    series_handles,
    subset_label,
    title,
    top_legend,
)

if TYPE_CHECKING:  # matplotlib loads where a figure is drawn (plots.py)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_PANELS_PER_ROW = 4


def _from_source(condition: str) -> bool:
    """A pair record's condition that compares en with a target (`en->zh`)."""
    pair = ConditionPair.parse(condition)
    return pair is not None and pair.first == SOURCE


def _interval(rec: MetricRecord) -> tuple[float, float] | None:
    """The interval readiness judges by (small_n.decisive): item-level where there is one."""
    low, high, _ = decisive(rec)
    return None if low is None or high is None else (low, high)


METHOD_NAMES = {"bootstrap": "bootstrap", "wilson": "Wilson", "wald": "Wald", "normal": "normal"}


def _method(rec: MetricRecord | None) -> str | None:
    if rec is None:
        return None
    if rec.item_low is not None:
        return "item-level"
    if rec.boot_low is not None:
        return "item-clustered bootstrap"
    return METHOD_NAMES.get(str(rec.ci_method)) if rec.ci_method is not None else None


ForestRow = tuple[str, str, float, tuple[float, float] | None]  # pair, judge, value %, interval


def _forest_rows(index: MetricIndex, pairs: Sequence[str], metric: str) -> list[ForestRow]:
    rows: list[ForestRow] = []
    for pair in pairs:
        for judge in index.judges:
            rec = index.get(judge, metric, pair)
            if rec is not None and rec.value is not None:
                rows.append((pair, judge, 100.0 * rec.value, _interval(rec)))
    return rows


def _draw_forest(
    ax: Axes,
    ys: dict[tuple[str, str], float],
    rows: list[ForestRow],
    colors: dict[str, str],
    *,
    limit: float,
    increase: bool,
) -> None:
    """Dots and interval lines on the shared rows, the limit as a red dashed line (0 too for a change)."""
    # one collection of interval lines and one of dots per panel: a few artists draw fast
    spans = [(ys[(p, j)], 100.0 * iv[0], 100.0 * iv[1], colors[j]) for p, j, _, iv in rows if iv is not None]
    if spans:
        y_s, lo, hi, c = zip(*spans, strict=True)
        ax.hlines(list(y_s), list(lo), list(hi), colors=list(c), lw=2.2, zorder=3)
    ax.scatter(
        [v for _, _, v, _ in rows],
        [ys[(p, j)] for p, j, _, _ in rows],
        s=36,
        c=[colors[j] for _, j, _, _ in rows],
        zorder=4,
    )
    ax.axvline(100.0 * limit, color=LIMIT_RED, linestyle="--", linewidth=1.2, zorder=2)
    if increase:
        ax.axvline(0.0, color=CHANCE_GREY, linewidth=0.8, zorder=2)
    lows = [100.0 * iv[0] for *_, iv in rows if iv is not None] + [v for _, _, v, _ in rows]
    highs = [100.0 * iv[1] for *_, iv in rows if iv is not None] + [v for _, _, v, _ in rows]
    left = min(0.0, min(lows)) if increase else 0.0  # a proportion from 0; a change may go below
    ax.set_xlim(left - 1.0, max([*highs, 100.0 * limit]) * 1.08 + 1.0)
    ax.grid(axis="x", color="#EEEEEE", zorder=0)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def forest_specs() -> list[MetricSpec]:
    """The metrics the forest draws: en -> target quantities with an upper readiness limit."""
    return [s for s in gated("invariance") if s.per == "pair" and s.gate is not None and s.gate.at_most]


def forest(index: MetricIndex, conditions: list[str], settings: ReportSettings) -> Figure | None:
    """The readiness quantities side by side on shared rows (one per target x judge): the en ->
    target flip rate, the position-inconsistency increase and any other declared invariance gate,
    each with the interval readiness judges by and its limit, so several judges compare at a glance
    (a judge fails where its whole interval is right of the red line, passes where it is left of it)."""
    panels = []
    for spec in forest_specs():
        limit = gate_of(spec.name).threshold(settings)
        unit = "points" if spec.scale == "points" else "%"
        pairs = [p for p in index.pairs(spec.name, conditions) if _from_source(p)]
        rows = _forest_rows(index, pairs, spec.name)
        if rows:
            panels.append((spec, limit, spec.prose, unit, rows))
    if not panels:
        return None
    keys = list(dict.fromkeys((pair, judge) for *_, rows in panels for pair, judge, _, _ in rows))
    ys: dict[tuple[str, str], float] = {}
    y, previous = 0.0, None
    for pair, judge in keys:
        if previous is not None and pair != previous:
            y += 0.6  # a gap between targets
        ys[(pair, judge)], previous, y = y, pair, y + 1.0
    colors = judge_palette(index)
    fig = figure(MAX_WIDTH, 1.6 + 0.3 * len(keys))
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, (spec, limit, what, unit, rows) in zip(axes, panels, strict=True):
        increase = spec.scale == "points"  # a change: it can be negative
        _draw_forest(ax, ys, rows, colors, limit=limit, increase=increase)
        methods = sorted({m for p, j, _, _ in rows if (m := _method(index.get(j, spec.name, p)))})
        title(ax, f"{what} ({' / '.join(methods) or 'no'} 95% interval)")
        ax.set_xlabel(f"{what}, {unit}; limit {100 * limit:g} {unit}", fontsize=8)
    labels = [f"{pair}  {judge_label(judge, 30).replace(chr(10), ' ')}" for pair, judge in keys]
    axes[0].set_yticks(list(ys.values()), labels, fontsize=8)
    axes[0].invert_yaxis()
    limit_handle = line_handle(color=LIMIT_RED, linestyle="--", linewidth=1.2, label="readiness limit")
    top_legend(fig, [*series_handles(colors, index.judges), limit_handle], "judge")
    return fig


def forest_subsets(
    index: MetricIndex,
    conditions: list[str],
    subsets_hint: Sequence[str],
    limit: float,
    metric: str = Metric.FLIP_RATE,
) -> Figure | None:
    """A readiness quantity per subset (the flip rate, or the position-inconsistency increase): one
    panel per en -> target pair, a group of rows (one per judge) per subset, each with its interval,
    against the readiness limit; where a judge flips or loses its order-consistency is where to look."""
    # its name on the axis (declared), and whether it is a difference (it can be negative: the axis
    # then spans zero, which gets a line of its own)
    spec = spec_of(metric)
    name = spec.prose if spec is not None else metric
    difference = spec is not None and spec.scale == "points"
    pairs = [p for p in index.pairs(metric, conditions) if _from_source(p)]
    subsets = leaf_subsets(index.subsets(metric, subsets_hint))
    judges = index.judges
    if not pairs or len(subsets) < 2 or not judges:
        return None
    colors = judge_palette(index)
    per_row = min(len(pairs), MAX_PANELS_PER_ROW)  # 23 targets: a grid of panels, not 23 slivers
    grid_rows = -(-len(pairs) // per_row)
    panel_height = 0.9 + 0.22 * len(subsets) * (len(judges) + 0.7)
    fig = figure(min(MAX_WIDTH, 2.4 + 3.6 * per_row), 0.7 + panel_height * grid_rows)
    # one x and one y scale for every panel, set the same on each below (not shared: matplotlib
    # passes every limit of a shared axis on to each sibling, slow at 23 panels); subset names left
    # of each row's first panel, ticks and the axis name under the lowest panel of each column only
    grid = fig.subplots(grid_rows, per_row, squeeze=False)
    for ax in grid.flat[len(pairs) :]:
        ax.set_visible(False)
    axes = list(grid.flat[: len(pairs)])
    lowest = {range(col, len(pairs), per_row)[-1] for col in range(per_row)}  # each column's last panel
    ys = {
        (subset, judge): g * (len(judges) + 0.7) + j
        for g, subset in enumerate(subsets)
        for j, judge in enumerate(judges)
    }
    highs: list[float] = [100.0 * limit]
    lows: list[float] = [0.0]
    drawn = False
    for at, (ax, pair) in enumerate(zip(axes, pairs, strict=True)):
        dots: list[tuple[float, float, str]] = []
        spans: list[tuple[float, float, float, str]] = []
        for (subset, judge), y in ys.items():
            rec = index.get(judge, metric, pair, subset)
            if rec is None or rec.value is None:
                continue
            interval = _interval(rec)
            if interval is not None:
                spans.append((y, 100.0 * interval[0], 100.0 * interval[1], colors[judge]))
                highs.append(100.0 * interval[1])
                lows.append(100.0 * interval[0])
            dots.append((100.0 * rec.value, y, colors[judge]))
            lows.append(100.0 * rec.value)
        if spans:
            y_s, lo, hi, c = zip(*spans, strict=True)
            ax.hlines(list(y_s), list(lo), list(hi), colors=list(c), lw=1.8, zorder=3)
        if dots:
            x_d, y_d, c_d = zip(*dots, strict=True)
            ax.scatter(list(x_d), list(y_d), s=20, c=list(c_d), zorder=4)
            drawn = True
        ax.axvline(100.0 * limit, color=LIMIT_RED, linestyle="--", linewidth=1.1, zorder=2)
        if difference:
            ax.axvline(0.0, color=CHANCE_GREY, linewidth=0.9, zorder=1)
        # the long name is on the x axis and in the figure's heading; panel titles must not collide:
        # side by side, a panel is titled by its target alone and the figure says the rest
        what = f"{'per subset' if difference else name + ' per subset'}, 95% interval"
        title(ax, pair if per_row > 1 else f"{pair}: {what}")
        if at in lowest:
            ax.set_xlabel(f"{name}, {'pp' if difference else '%'}", fontsize=8)
        else:
            ax.tick_params(axis="x", labelbottom=False)
        ax.grid(axis="x", color="#EEEEEE", zorder=0)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    if not drawn:
        return None
    low = min(lows) * 1.06 - 1.0 if difference and min(lows) < 0 else 0.0
    centres = [g * (len(judges) + 0.7) + (len(judges) - 1) / 2 for g in range(len(subsets))]
    bottom = max(ys.values()) + 0.7
    for at, ax in enumerate(axes):
        ax.set_xlim(low, max(highs) * 1.06 + 1.0)
        ax.set_ylim(bottom, -0.7)  # the first subset on top
        ax.set_yticks(centres, [subset_label(s) for s in subsets] if at % per_row == 0 else [], fontsize=8)
        ax.tick_params(axis="y", length=0)
    unit = "pp" if difference else "%"
    limit_handle = line_handle(
        color=LIMIT_RED,
        linestyle="--",
        linewidth=1.1,
        label=f"readiness limit {100 * limit:g} {unit}",
    )
    # side by side, the panels' titles name the target only: the legend's title says what they show
    heading = f"{name[0].upper()}{name[1:]} per subset and target, 95% interval; judge"
    heading = heading if per_row > 1 else "judge"
    top_legend(fig, [*series_handles(colors, judges), limit_handle], heading)
    return fig
