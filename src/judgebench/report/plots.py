"""The report's figures as PNG bytes (matplotlib, Agg canvas, no pyplot state, no display needed).

Each plot is drawn from the same MetricIndex the tables use. A plot whose metric was not measured is
simply absent from the returned mapping; the renderers say "not measured" for its section.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from judgebench.analysis.model import ALL, MEAN_JUDGE, PAIR_SEP, SOURCE, Analysis, ReportSettings
from judgebench.analysis.subsets import leaf_subsets
from judgebench.records import Metric, MetricRecord
from judgebench.records.metrics import tie_probe_metric
from judgebench.report.colors import MEAN_COLOUR, PALETTE, judge_colors, wrap_label
from judgebench.report.index import MetricIndex

TIE_GREY = "#B8B8B8"
# tie-probe outcomes: colours no judge has (judges own PALETTE in every figure)
EN_WINS = "#5B6F8A"
TARGET_WINS = "#C7A46A"
CHANCE_GREY = "#555555"
LIMIT_RED = "#C00000"
DPI = 110
MAX_WIDTH = 11.5  # inches: at DPI this is about the HTML column width, so text shows at its drawn size

PLOT_TITLES: dict[str, str] = {
    "accuracy": "Accuracy by condition",
    "flips": "Language flip rates",
    "position": "Position inconsistency by condition",
    "tie_probe": "Tie-probe outcomes",
    "subset_heatmap": "Strict accuracy per subset",
    "forest": "Flip rate and position-inconsistency increase per judge and target, against the limits",
    "forest_flips_subsets": "Flip rate per subset, judge and target, against the readiness limit",
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
        "forest": lambda: _forest(index, conditions, analysis.settings),
        "forest_flips_subsets": lambda: _forest_subsets(
            index, conditions, analysis.subsets, analysis.settings.max_flip_rate
        ),
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
    """Long model specs wrap after the provider colon or a slash, never inside a word."""
    if judge == MEAN_JUDGE:
        return "mean of\njudges"
    return "\n".join(wrap_label(judge, width))


def _colors(index: MetricIndex) -> dict[str, str]:
    """The report's one colour per judge (the same in every figure)."""
    return judge_colors(index.judges, MEAN_JUDGE)


def _mean_marks(ax: Axes, groups: Sequence[str], get: Callable[[str], MetricRecord | None]) -> bool:
    """The mean over judges as a black dotted line across each group: not a judge, no interval."""
    drawn = False
    for g_index, group in enumerate(groups):
        rec = get(group)
        if rec is None or rec.value is None:
            continue
        ax.hlines(
            100.0 * rec.value,
            g_index - 0.42,
            g_index + 0.42,
            colors=MEAN_COLOUR,
            linestyles=":",
            lw=1.6,
            zorder=5,
        )
        drawn = True
    return drawn


def _mean_handle() -> Line2D:
    return Line2D([], [], color=MEAN_COLOUR, linestyle=":", lw=1.6, label="mean of judges (no interval)")


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


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(min(MAX_WIDTH, width), height), layout="constrained")


def _group_width(groups: int, series: int) -> float:
    return float(min(MAX_WIDTH, max(6.0, 1.2 + groups * (0.35 * series + 0.6))))


def _top_legend(fig: Figure, handles: Sequence[Artist], title: str) -> None:
    """One legend above the axes (and their titles) for the whole figure, so it never covers a bar; as
    many columns as the figure's width holds, so no entry is cut off at the edges."""
    labels = [str(h.get_label()) for h in handles]
    entry = 0.55 + 0.068 * max(len(label) for label in labels)  # inches at fontsize 8, with the swatch
    width = float(fig.get_figwidth())
    ncol = max(1, min(len(handles), 6, int((width - 0.2) // entry)))
    fig.legend(
        handles=list(handles),
        title=title,
        loc="outside upper center",
        ncol=ncol,
        fontsize=8,
        title_fontsize=8,
        frameon=False,
    )


def _series_handles(colors: dict[str, str], names: Sequence[str]) -> list[Artist]:
    return [Patch(color=colors[name], label=name) for name in names]


def _accuracy(index: MetricIndex, conditions: list[str]) -> Figure | None:
    conds = index.conditions(Metric.STRICT_ACCURACY, conditions)
    if not conds:
        return None
    judges = index.judges
    colors = _colors(index)
    panels = [(Metric.STRICT_ACCURACY, "Strict accuracy (Wilson 95% CI)")]
    if index.has(Metric.TIE_HALF_ACCURACY):
        panels.append((Metric.TIE_HALF_ACCURACY, "Tie-half accuracy (normal 95% CI)"))
    # panels stacked, each full width: side by side, the bars and their labels would not fit
    fig = _figure(_group_width(len(conds), len(judges)), 0.9 + 3.4 * len(panels))
    axes = fig.subplots(len(panels), 1, sharey=True, squeeze=False)[:, 0]
    values: list[float] = []
    mean_drawn = False
    for ax, (metric, title) in zip(axes, panels, strict=True):

        def get(cond: str, judge: str, metric: str = metric) -> MetricRecord | None:
            return index.get(judge, metric, cond)

        def mean(cond: str, metric: str = metric) -> MetricRecord | None:
            return index.get(MEAN_JUDGE, metric, cond)

        values.extend(_grouped_bars(ax, conds, judges, get, colors))
        if len(judges) > 1:
            mean_drawn |= _mean_marks(ax, conds, mean)
        ax.axhline(50.0, color=CHANCE_GREY, linestyle="--", linewidth=1, zorder=4)
        ax.set_title(title, fontsize=10)
    if not values:  # measured nowhere (every call missing): no empty chart
        return None
    axes[0].set_ylim(0, 108)  # a proportion starts at 0: bar lengths compare
    for ax in axes:
        ax.set_yticks(list(range(0, 101, 10)))
        ax.set_ylabel("% of answered judgments")
    chance = Line2D([], [], color=CHANCE_GREY, linestyle="--", linewidth=1, label="chance (50%)")
    extra: list[Artist] = [_mean_handle()] if mean_drawn else []
    _top_legend(fig, [*_series_handles(colors, judges), *extra, chance], "judge")
    return fig


def _flips(index: MetricIndex, conditions: list[str], threshold: float) -> Figure | None:
    pairs = index.pairs(Metric.FLIP_RATE, conditions)
    if not pairs:
        return None
    judges = index.judges
    colors = _colors(index)
    fig = _figure(_group_width(len(pairs), len(judges)), 4.6)
    ax = fig.subplots()

    def get(pair: str, judge: str) -> MetricRecord | None:
        return index.get(judge, Metric.FLIP_RATE, pair)

    values = _grouped_bars(ax, pairs, judges, get, colors, alpha=0.45)
    if not values:
        return None
    # Decisive reversals (one output swapped for the other) drawn solid inside each flip bar.
    width = 0.8 / max(1, len(judges))
    reversal_drawn = False
    for s_index, judge in enumerate(judges):
        for g_index, pair in enumerate(pairs):
            rec = index.get(judge, Metric.FLIP_REVERSAL_RATE, pair)
            if rec is None or rec.value is None:
                continue
            x = g_index - 0.4 + width * (s_index + 0.5)
            ax.bar(x, 100.0 * rec.value, width * 0.92, color=colors[judge], zorder=2.5)
            reversal_drawn = True
    mean_drawn = len(judges) > 1 and _mean_marks(
        ax, pairs, lambda p: index.get(MEAN_JUDGE, Metric.FLIP_RATE, p)
    )
    ax.axhline(100.0 * threshold, color=LIMIT_RED, linestyle="--", linewidth=1, zorder=4)
    top = max([*values, 100.0 * threshold])
    ax.set_ylim(0, top * 1.18 + 1)
    ax.set_ylabel("% of (item, order) pairs whose verdict differs")
    ax.set_title(
        "Flip rate with Wilson 95% CI" + (" (solid part: A/B reversals)" if reversal_drawn else ""),
        fontsize=10,
    )
    limit = Line2D(
        [], [], color=LIMIT_RED, linestyle="--", linewidth=1, label=f"max flip rate {100 * threshold:g}%"
    )
    extra: list[Artist] = [_mean_handle()] if mean_drawn else []
    _top_legend(fig, [*_series_handles(colors, judges), *extra, limit], "judge")
    return fig


def _position(index: MetricIndex, conditions: list[str]) -> Figure | None:
    conds = index.conditions(Metric.POSITION_INCONSISTENCY, conditions)
    if not conds:
        return None
    judges = index.judges
    fig = _figure(_group_width(len(conds), len(judges)), 4.6)
    ax = fig.subplots()
    colors = _colors(index)

    def get(cond: str, judge: str) -> MetricRecord | None:
        return index.get(judge, Metric.POSITION_INCONSISTENCY, cond)

    values = _grouped_bars(ax, conds, judges, get, colors)
    if not values:
        return None
    mean_drawn = len(judges) > 1 and _mean_marks(
        ax, conds, lambda c: index.get(MEAN_JUDGE, Metric.POSITION_INCONSISTENCY, c)
    )
    ax.set_ylim(0, max(values) * 1.18 + 1)
    ax.set_ylabel("% of items: orig and swap verdicts differ")
    ax.set_title("Position inconsistency with Wilson 95% CI", fontsize=10)
    extra: list[Artist] = [_mean_handle()] if mean_drawn else []
    _top_legend(fig, [*_series_handles(colors, judges), *extra], "judge")
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
        ("EN wins", 1, EN_WINS),
        ("Tie", 2, TIE_GREY),
        (f"{target_name.upper()} wins", 3, TARGET_WINS),
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
    handles = [Patch(color=color, label=name) for name, _, color in segments]
    _top_legend(fig, handles, "probe outcome")  # above the title, never over it
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


def _interval(rec: MetricRecord) -> tuple[float, float] | None:
    """The interval readiness judges by: the item-clustered bootstrap when there is one, else the main."""
    if rec.boot_low is not None and rec.boot_high is not None:
        return rec.boot_low, rec.boot_high
    if rec.ci_low is not None and rec.ci_high is not None:
        return rec.ci_low, rec.ci_high
    return None


METHOD_NAMES = {"bootstrap": "bootstrap", "wilson": "Wilson", "wald": "Wald", "normal": "normal"}


def _method(rec: MetricRecord | None) -> str | None:
    if rec is None:
        return None
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


def _forest(index: MetricIndex, conditions: list[str], settings: ReportSettings) -> Figure | None:
    """The two readiness quantities side by side on shared rows (one per target x judge): the en ->
    target flip rate and the position-inconsistency increase, each with the interval readiness judges
    by and its limit, so several judges compare at a glance (a judge fails where its whole interval is
    right of the red line, passes where it is left of it)."""
    panels = []
    for metric, limit, what, unit in (
        (Metric.FLIP_RATE, settings.max_flip_rate, "flip rate", "%"),
        (
            Metric.POSITION_INCONSISTENCY_INCREASE,
            settings.max_position_increase,
            "position increase",
            "points",
        ),
    ):
        pairs = [p for p in index.pairs(metric, conditions) if p.partition(PAIR_SEP)[0] == SOURCE]
        rows = _forest_rows(index, pairs, metric)
        if rows:
            panels.append((metric, limit, what, unit, rows))
    if not panels:
        return None
    keys = list(dict.fromkeys((pair, judge) for *_, rows in panels for pair, judge, _, _ in rows))
    ys: dict[tuple[str, str], float] = {}
    y, previous = 0.0, None
    for pair, judge in keys:
        if previous is not None and pair != previous:
            y += 0.6  # a gap between targets
        ys[(pair, judge)], previous, y = y, pair, y + 1.0
    colors = _colors(index)
    fig = _figure(MAX_WIDTH, 1.6 + 0.3 * len(keys))
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, (metric, limit, what, unit, rows) in zip(axes, panels, strict=True):
        increase = metric == Metric.POSITION_INCONSISTENCY_INCREASE
        _draw_forest(ax, ys, rows, colors, limit, increase)
        methods = sorted({m for p, j, _, _ in rows if (m := _method(index.get(j, metric, p)))})
        ax.set_title(f"{what} ({' / '.join(methods) or 'no'} 95% interval)", fontsize=10)
        ax.set_xlabel(f"{what}, {unit}; limit {100 * limit:g} {unit}", fontsize=8)
    labels = [f"{pair}  {_label(judge, 30).replace(chr(10), ' ')}" for pair, judge in keys]
    axes[0].set_yticks(list(ys.values()), labels, fontsize=8)
    axes[0].invert_yaxis()
    limit_handle = Line2D([], [], color=LIMIT_RED, linestyle="--", linewidth=1.2, label="readiness limit")
    _top_legend(fig, [*_series_handles(colors, index.judges), limit_handle], "judge")
    return fig


def _forest_subsets(
    index: MetricIndex, conditions: list[str], subsets_hint: Sequence[str], limit: float
) -> Figure | None:
    """The flip rate per subset: one panel per en -> target pair, a group of rows (one per judge) per
    subset, each with its interval, against the readiness limit; where a judge flips is where to look."""
    pairs = [p for p in index.pairs(Metric.FLIP_RATE, conditions) if p.partition(PAIR_SEP)[0] == SOURCE]
    subsets = leaf_subsets(index.subsets(Metric.FLIP_RATE, subsets_hint))
    judges = index.judges
    if not pairs or len(subsets) < 2 or not judges:
        return None
    colors = _colors(index)
    fig = _figure(min(MAX_WIDTH, 2.4 + 3.6 * len(pairs)), 1.6 + 0.22 * len(subsets) * (len(judges) + 0.7))
    axes = fig.subplots(1, len(pairs), sharey=True, squeeze=False)[0]
    ys = {
        (subset, judge): g * (len(judges) + 0.7) + j
        for g, subset in enumerate(subsets)
        for j, judge in enumerate(judges)
    }
    highs: list[float] = [100.0 * limit]
    drawn = False
    for ax, pair in zip(axes, pairs, strict=True):
        dots: list[tuple[float, float, str]] = []
        spans: list[tuple[float, float, float, str]] = []
        for (subset, judge), y in ys.items():
            rec = index.get(judge, Metric.FLIP_RATE, pair, subset)
            if rec is None or rec.value is None:
                continue
            interval = _interval(rec)
            if interval is not None:
                spans.append((y, 100.0 * interval[0], 100.0 * interval[1], colors[judge]))
                highs.append(100.0 * interval[1])
            dots.append((100.0 * rec.value, y, colors[judge]))
        if spans:
            y_s, lo, hi, c = zip(*spans, strict=True)
            ax.hlines(list(y_s), list(lo), list(hi), colors=list(c), lw=1.8, zorder=3)
        if dots:
            x_d, y_d, c_d = zip(*dots, strict=True)
            ax.scatter(list(x_d), list(y_d), s=20, c=list(c_d), zorder=4)
            drawn = True
        ax.axvline(100.0 * limit, color=LIMIT_RED, linestyle="--", linewidth=1.1, zorder=2)
        ax.set_title(f"{pair}: flip rate per subset, 95% interval", fontsize=10)
        ax.set_xlabel("flip rate, %", fontsize=8)
        ax.grid(axis="x", color="#EEEEEE", zorder=0)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    if not drawn:
        return None
    for ax in axes:
        ax.set_xlim(0, max(highs) * 1.06 + 1.0)
    centres = [g * (len(judges) + 0.7) + (len(judges) - 1) / 2 for g in range(len(subsets))]
    axes[0].set_yticks(centres, [_subset_label(s) for s in subsets], fontsize=8)
    axes[0].tick_params(axis="y", length=0)
    axes[0].invert_yaxis()
    limit_handle = Line2D(
        [], [], color=LIMIT_RED, linestyle="--", linewidth=1.1, label=f"readiness limit {100 * limit:g} %"
    )
    _top_legend(fig, [*_series_handles(colors, judges), limit_handle], "judge")
    return fig


def _subset_label(subset: str) -> str:
    head, _, tail = subset.rpartition("/")
    return f"{tail} ({head[:3]}.)" if head else subset


__all__ = ["PALETTE", "PLOT_TITLES", "make_plots"]
