"""The report's figures as PNG bytes (matplotlib, Agg canvas, no pyplot state, no display needed).

Each plot is drawn from the same MetricIndex the tables use. A plot whose metric was not measured is
simply absent from the returned mapping; the renderers say "not measured" for its section.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable, Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from judgebench.analysis.model import ALL, MEAN_JUDGE, Analysis
from judgebench.analysis.subsets import leaf_subsets
from judgebench.records import Metric, MetricRecord
from judgebench.records.metrics import tie_probe_metric
from judgebench.report.index import MetricIndex

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
TIE_GREY = "#B8B8B8"
DPI = 110
MAX_WIDTH = 11.5  # inches: at DPI this is about the HTML column width, so text shows at its drawn size

PLOT_TITLES: dict[str, str] = {
    "accuracy": "Accuracy by condition",
    "flips": "Language flip rates",
    "position": "Position inconsistency by condition",
    "tie_probe": "Tie-probe outcomes",
    "subset_heatmap": "Strict accuracy per subset",
}

Getter = Callable[[str, str], MetricRecord | None]


def make_plots(analysis: Analysis) -> dict[str, bytes]:
    """Every figure that has data, keyed as in PLOT_TITLES, each a PNG."""
    index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
    conditions = list(analysis.conditions)
    out: dict[str, bytes] = {}
    builders: dict[str, Callable[[], Figure | None]] = {
        "accuracy": lambda: _accuracy(index, conditions),
        "flips": lambda: _flips(index, conditions, analysis.settings.max_flip_rate),
        "position": lambda: _position(index, conditions),
        "tie_probe": lambda: _tie_probe(index, conditions),
        "subset_heatmap": lambda: _heatmap(index, conditions, analysis.subsets),
    }
    for key, build in builders.items():
        fig = build()
        if fig is not None:
            out[key] = _png(fig)
    return out


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    # constrained layout already fits everything: no bbox_inches="tight" (it would draw twice)
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs={"compress_level": 4})
    return buffer.getvalue()


def _label(judge: str, width: int = 18) -> str:
    """Long model specs wrap at the provider colon, then at `width`, so tick labels never collide."""
    if judge == MEAN_JUDGE:
        return "mean of\njudges"
    if len(judge) <= width:
        return judge
    head, sep, tail = judge.partition(":")
    parts = [head + sep, tail] if sep and tail else [judge]
    return "\n".join(line for part in parts for line in textwrap.wrap(part, width, break_on_hyphens=False))


def _colors(names: Sequence[str]) -> dict[str, str]:
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def _grouped_bars(
    ax: Axes,
    groups: Sequence[str],
    series: Sequence[str],
    get: Getter,
    colors: dict[str, str],
    *,
    annotate: bool = True,
    alpha: float = 1.0,
) -> list[float]:
    """Bars of group x series with their interval as error bars; returns every plotted value (%)."""
    width = 0.8 / max(1, len(series))
    values: list[float] = []
    for s_index, name in enumerate(series):
        xs: list[float] = []
        ys: list[float] = []
        errs: list[tuple[float, float, float, float]] = []  # x, y, minus, plus
        for g_index, group in enumerate(groups):
            rec = get(group, name)
            if rec is None or rec.value is None:
                continue
            x = g_index - 0.4 + width * (s_index + 0.5)
            y = 100.0 * rec.value
            low = 100.0 * rec.ci_low if rec.ci_low is not None else y
            high = 100.0 * rec.ci_high if rec.ci_high is not None else y
            xs.append(x)
            ys.append(y)
            values.extend([y, low, high])
            if rec.ci_low is not None and rec.ci_high is not None:  # mean rows carry no interval
                errs.append((x, y, max(0.0, y - low), max(0.0, high - y)))
            if annotate:
                ax.annotate(
                    f"{y:.1f}",
                    (x, high),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    color="#333333",
                )
        if not xs:
            continue
        ax.bar(xs, ys, width * 0.92, color=colors[name], alpha=alpha, label=name, zorder=2)
        if errs:
            ex, ey, lo, hi = (list(col) for col in zip(*errs, strict=True))
            ax.errorbar(
                ex, ey, yerr=[lo, hi], fmt="none", ecolor="#222222", elinewidth=1, capsize=2.5, zorder=3
            )
    ax.set_xticks(range(len(groups)), [_label(g) for g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.grid(axis="y", color="#E5E5E5", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return values


def _by_condition(series: int) -> bool:
    """More conditions than colours (a many-language study): one bar group per condition with a bar
    per judge, instead of one group per judge with a bar per condition."""
    return series > len(PALETTE)


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(min(MAX_WIDTH, width), height), layout="constrained")


def _group_width(groups: int, series: int) -> float:
    return float(min(MAX_WIDTH, max(6.0, 1.2 + groups * (0.35 * series + 0.6))))


def _top_legend(fig: Figure, handles: Sequence[Artist], title: str) -> None:
    """One legend above the axes for the whole figure, so it never covers a bar."""
    fig.legend(
        handles=list(handles),
        title=title,
        loc="outside upper center",
        ncol=min(len(handles), 6),
        fontsize=8,
        title_fontsize=8,
        frameon=False,
    )


def _series_handles(colors: dict[str, str]) -> list[Artist]:
    return [Patch(color=color, label=name) for name, color in colors.items()]


def _accuracy(index: MetricIndex, conditions: list[str]) -> Figure | None:
    conds = index.conditions(Metric.STRICT_ACCURACY, conditions)
    if not conds:
        return None
    judges = index.rows_judges()
    many = _by_condition(len(conds))
    groups, series = (conds, judges) if many else (judges, conds)
    colors = _colors(series)
    panels = [(Metric.STRICT_ACCURACY, "Strict accuracy (Wilson 95% CI)")]
    if index.has(Metric.TIE_HALF_ACCURACY):
        panels.append((Metric.TIE_HALF_ACCURACY, "Tie-half accuracy (normal 95% CI)"))
    # panels stacked, each full width: side by side, the bars and their labels would not fit
    fig = _figure(_group_width(len(groups), len(series)), 0.8 + 3.4 * len(panels))
    axes = fig.subplots(len(panels), 1, sharey=True, squeeze=False)[:, 0]
    lows: list[float] = []
    for ax, (metric, title) in zip(axes, panels, strict=True):

        def get(group: str, name: str, metric: str = metric) -> MetricRecord | None:
            judge, cond = (name, group) if many else (group, name)
            return index.get(judge, metric, cond)

        lows.extend(_grouped_bars(ax, groups, series, get, colors, annotate=not many))
        ax.set_title(title, fontsize=10)
    if not lows:  # measured nowhere (every call missing): no empty chart
        return None
    floor = max(0.0, 10.0 * np.floor((min(lows) - 8.0) / 10.0))
    axes[0].set_ylim(floor, 106)
    for ax in axes:
        ax.set_yticks(list(range(int(floor), 101, 10)))
        ax.set_ylabel("% of answered judgments")
    _top_legend(fig, _series_handles(colors), "judge" if many else "condition")
    return fig


def _flips(index: MetricIndex, conditions: list[str], threshold: float) -> Figure | None:
    pairs = index.pairs(Metric.FLIP_RATE, conditions)
    if not pairs:
        return None
    judges = index.rows_judges()
    many = _by_condition(len(pairs))
    groups, series = (pairs, judges) if many else (judges, pairs)
    colors = _colors(series)
    fig = _figure(_group_width(len(groups), len(series)), 4.4)
    ax = fig.subplots()

    def get(group: str, name: str, metric: str = Metric.FLIP_RATE) -> MetricRecord | None:
        judge, pair = (name, group) if many else (group, name)
        return index.get(judge, metric, pair)

    values = _grouped_bars(ax, groups, series, get, colors, alpha=0.45, annotate=not many)
    if not values:
        return None
    if many:  # `en->zh-hant` beside `en->vi`: slanted labels do not collide
        ax.tick_params(axis="x", labelrotation=30)
    # Decisive reversals (one output swapped for the other) drawn solid inside each flip bar.
    width = 0.8 / len(series)
    reversal_drawn = False
    for s_index, name in enumerate(series):
        for g_index, group in enumerate(groups):
            rec = get(group, name, Metric.FLIP_REVERSAL_RATE)
            if rec is None or rec.value is None:
                continue
            x = g_index - 0.4 + width * (s_index + 0.5)
            ax.bar(x, 100.0 * rec.value, width * 0.92, color=colors[name], zorder=2.5)
            reversal_drawn = True
    ax.axhline(100.0 * threshold, color="#C00000", linestyle="--", linewidth=1, zorder=4)
    top = max([*values, 100.0 * threshold]) if values else 100.0 * threshold
    ax.set_ylim(0, top * 1.18 + 1)
    ax.set_ylabel("% of (item, order) pairs whose verdict differs")
    ax.set_title(
        "Flip rate with Wilson 95% CI" + (" (solid part: A/B reversals)" if reversal_drawn else ""),
        fontsize=10,
    )
    limit = Line2D(
        [], [], color="#C00000", linestyle="--", linewidth=1, label=f"max flip rate {100 * threshold:g}%"
    )
    _top_legend(fig, [*_series_handles(colors), limit], "judge" if many else "condition pair")
    return fig


def _position(index: MetricIndex, conditions: list[str]) -> Figure | None:
    conds = index.conditions(Metric.POSITION_INCONSISTENCY, conditions)
    if not conds:
        return None
    judges = index.rows_judges()
    many = _by_condition(len(conds))
    groups, series = (conds, judges) if many else (judges, conds)
    fig = _figure(_group_width(len(groups), len(series)), 4.4)
    ax = fig.subplots()
    colors = _colors(series)

    def get(group: str, name: str) -> MetricRecord | None:
        judge, cond = (name, group) if many else (group, name)
        return index.get(judge, Metric.POSITION_INCONSISTENCY, cond)

    values = _grouped_bars(ax, groups, series, get, colors, annotate=not many)
    if not values:
        return None
    ax.set_ylim(0, (max(values) if values else 10.0) * 1.18 + 1)
    ax.set_ylabel("% of items: orig and swap verdicts differ")
    ax.set_title("Position inconsistency with Wilson 95% CI", fontsize=10)
    _top_legend(fig, _series_handles(colors), "judge" if many else "condition")
    return fig


def _tie_probe(index: MetricIndex, conditions: list[str]) -> Figure | None:
    targets = index.conditions(Metric.TIE_PROBE_TIE, conditions)
    if not targets:
        return None
    rows: list[tuple[str, float, float, float]] = []  # label, EN %, Tie %, target %
    for judge in index.rows_judges():
        for target in targets:
            en = index.get(judge, Metric.TIE_PROBE_EN, target)
            tie = index.get(judge, Metric.TIE_PROBE_TIE, target)
            other = index.get(judge, tie_probe_metric(target), target)
            vals = [r.value for r in (en, tie, other) if r is not None and r.value is not None]
            if len(vals) != 3:
                continue
            label = _label(judge, 26).replace("\n", " ") + (f" ({target})" if len(targets) > 1 else "")
            rows.append((label, 100.0 * vals[0], 100.0 * vals[1], 100.0 * vals[2]))
    if not rows:
        return None
    fig = _figure(MAX_WIDTH, 1.4 + 0.45 * len(rows))
    ax = fig.subplots()
    ys = np.arange(len(rows))[::-1]
    target_name = targets[0] if len(targets) == 1 else "target"
    segments = (
        ("EN wins", 1, PALETTE[0]),
        ("Tie", 2, TIE_GREY),
        (f"{target_name.upper()} wins", 3, PALETTE[1]),
    )
    left = np.zeros(len(rows))
    for name, col, color in segments:
        widths = np.array([row[col] for row in rows], dtype=float)
        ax.barh(ys, widths, left=left, color=color, label=name, height=0.6, edgecolor="white", linewidth=0.5)
        for y, x0, w in zip(ys, left, widths, strict=True):
            if w >= 7.0:
                ax.text(x0 + w / 2, y, f"{w:.1f}%", ha="center", va="center", fontsize=8, color="black")
        left = left + widths
    for y, row in zip(ys, rows, strict=True):
        ax.text(101.5, y, f"EN {row[1]:.1f}% · {target_name.upper()} {row[3]:.1f}%", va="center", fontsize=8)
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of valid probes")
    ax.set_title("Tie-probes: the gold output in English vs in the target language", fontsize=10)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.06), ncol=3, fontsize=8, frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def _heatmap(index: MetricIndex, conditions: list[str], subsets_hint: Sequence[str]) -> Figure | None:
    conds = index.conditions(Metric.STRICT_ACCURACY, conditions)
    subsets = leaf_subsets(index.subsets(Metric.STRICT_ACCURACY, subsets_hint)) or [ALL]
    judges = index.rows_judges()
    if not conds or not judges:
        return None
    grid = np.full((len(conds), len(judges), len(subsets)), np.nan)
    for c, cond in enumerate(conds):
        for j, judge in enumerate(judges):
            for s, subset in enumerate(subsets):
                rec = index.get(judge, Metric.STRICT_ACCURACY, cond, subset)
                if rec is not None and rec.value is not None:
                    grid[c, j, s] = 100.0 * rec.value
    if np.isnan(grid).all():
        return None
    vmin, vmax = float(np.nanmin(grid)), float(np.nanmax(grid))
    if vmax - vmin < 1.0:
        vmin, vmax = vmin - 0.5, vmax + 0.5
    if _by_condition(len(conds)):
        return _heatmap_by_condition(grid, conds, judges, subsets, (vmin, vmax))
    panel_w = 0.75 * len(subsets) + 0.6
    fig = _figure(2.2 + panel_w * len(conds), 1.9 + 0.5 * len(judges))
    axes = fig.subplots(1, len(conds), sharey=True, squeeze=False)[0]
    image = None
    mid = (vmin + vmax) / 2
    for c, (ax, cond) in enumerate(zip(axes, conds, strict=True)):
        image = ax.imshow(grid[c], cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        for j in range(len(judges)):
            for s in range(len(subsets)):
                v = grid[c, j, s]
                text = "n/a" if np.isnan(v) else f"{v:.0f}"
                ax.text(
                    s, j, text, ha="center", va="center", fontsize=8, color="white" if v < mid else "black"
                )
        ax.set_xticks(
            range(len(subsets)), [_subset_label(s) for s in subsets], rotation=40, ha="right", fontsize=8
        )
        ax.set_title(cond, fontsize=10)
        ax.tick_params(length=0)
    axes[0].set_yticks(range(len(judges)), [_label(j, 26).replace("\n", " ") for j in judges], fontsize=8)
    if image is not None:
        bar = fig.colorbar(image, ax=list(axes), shrink=0.9, pad=0.02)
        bar.set_label("strict accuracy %", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    fig.suptitle("Strict accuracy per subset and condition", fontsize=10)
    return fig


def _heatmap_by_condition(
    grid: np.ndarray,
    conds: Sequence[str],
    judges: Sequence[str],
    subsets: Sequence[str],
    limits: tuple[float, float],
) -> Figure:
    """Many conditions: one panel per judge, stacked, with a row per condition and a column per subset."""
    vmin, vmax = limits
    mid = (vmin + vmax) / 2
    fig = _figure(2.6 + 0.75 * len(subsets), 1.4 + len(judges) * (0.6 + 0.24 * len(conds)))
    axes = fig.subplots(len(judges), 1, sharex=True, squeeze=False)[:, 0]
    image = None
    for j, (ax, judge) in enumerate(zip(axes, judges, strict=True)):
        image = ax.imshow(grid[:, j, :], cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        for c in range(len(conds)):
            for s in range(len(subsets)):
                v = grid[c, j, s]
                text = "n/a" if np.isnan(v) else f"{v:.0f}"
                ax.text(
                    s, c, text, ha="center", va="center", fontsize=7, color="white" if v < mid else "black"
                )
        ax.set_yticks(range(len(conds)), list(conds), fontsize=8)
        ax.set_title(_label(judge, 40).replace("\n", " "), fontsize=10)
        ax.tick_params(length=0)
    axes[-1].set_xticks(
        range(len(subsets)), [_subset_label(s) for s in subsets], rotation=40, ha="right", fontsize=8
    )
    if image is not None:
        bar = fig.colorbar(image, ax=list(axes), shrink=0.6, pad=0.02)
        bar.set_label("strict accuracy %", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    fig.suptitle("Strict accuracy per subset and condition", fontsize=10)
    return fig


def _subset_label(subset: str) -> str:
    head, _, tail = subset.rpartition("/")
    return f"{tail} ({head[:3]}.)" if head else subset


__all__ = ["PLOT_TITLES", "make_plots"]
