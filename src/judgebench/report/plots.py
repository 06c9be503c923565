"""The report's figures as PNG bytes (matplotlib, Agg canvas, no pyplot state, no display needed).

Each plot is drawn from the same MetricIndex the tables use. A plot whose metric was not measured is
simply absent from the returned mapping; the renderers say "not measured" for its section.

matplotlib (0.7 s to import) loads in the functions that draw, so that importing the report package
(and `judgebench.api`) does not pay for it; the types it names are for the checker only.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from judgebench.analysis.findings import ALL, MEAN_JUDGE
from judgebench.analysis.subsets import leaf_subsets
from judgebench.palette import MEAN_COLOUR, PALETTE, judge_colors, wrap_label
from judgebench.records import Metric, MetricRecord
from judgebench.records.metrics import tie_probe_metric
from judgebench.report.index import MetricIndex

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

TIE_GREY = "#B8B8B8"
# tie-probe outcomes: colours no judge has (judges own PALETTE in every figure)
EN_WINS = "#5B6F8A"
TARGET_WINS = "#C7A46A"
CHANCE_GREY = "#555555"
LIMIT_RED = "#C00000"
# strict accuracy per subset: diverging around chance (white), red below, blue above
HEAT_CMAP = "RdBu"
DPI = 110
MAX_CONDITION_PANELS = 4  # the heatmap turns around beyond this many conditions
MAX_WIDTH = 11.5  # inches: at DPI this is about the HTML column width, so text shows at its drawn size

PLOT_TITLES: dict[str, str] = {
    "accuracy": "Accuracy by condition",
    "flips": "Language flip rates",
    "position": "Position inconsistency by condition",
    "tie_probe": "Tie-probe outcomes",
    "subset_heatmap": "Strict accuracy per subset",
    "forest": "Flip rate and position-inconsistency increase per judge and target, against the limits",
    "forest_flips_subsets": "Flip rate per subset, judge and target, against the readiness limit",
    "forest_position_subsets": "Position-inconsistency increase per subset, against its limit",
    "probes_forest": "Probe flip rates per judge, probe and language, against the readiness limit",
}

Getter = Callable[[str, str], MetricRecord | None]


def png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    # constrained layout already fits everything: no bbox_inches="tight" (it would draw twice)
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs={"compress_level": 4})
    return buffer.getvalue()


# an axes title's height, said outright: left to matplotlib (None), each title is placed anew at every
# draw by measuring what is above its axes, a fifth of the drawing of a 23-panel figure; no figure
# here has anything above an axes but its title, so 1.0 is where it would go (the same PNG bytes)
TITLE_Y: float | None = 1.0


def title(ax: Axes, text: str, fontsize: float = 10) -> None:
    ax.set_title(text, fontsize=fontsize, y=TITLE_Y)


def judge_label(judge: str, width: int = 18) -> str:
    """Long model specs wrap after the provider colon or a slash, never inside a word."""
    if judge == MEAN_JUDGE:
        return "mean of\njudges"
    return "\n".join(wrap_label(judge, width))


def judge_palette(index: MetricIndex) -> dict[str, str]:
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
    return line_handle(color=MEAN_COLOUR, linestyle=":", lw=1.6, label="mean of judges (no interval)")


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
    ax.set_xticks(range(len(groups)), [judge_label(g) for g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.grid(axis="y", color="#E5E5E5", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return values


def figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(min(MAX_WIDTH, width), height), layout="constrained")


def _group_width(groups: int, series: int) -> float:
    return float(min(MAX_WIDTH, max(6.0, 1.2 + groups * (0.35 * series + 0.6))))


def top_legend(fig: Figure, handles: Sequence[Artist], title: str) -> None:
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


def series_handles(colors: dict[str, str], names: Sequence[str]) -> list[Artist]:
    return patch_handles([(name, colors[name]) for name in names])


def patch_handles(entries: Sequence[tuple[str, str]]) -> list[Artist]:
    """Legend entries as colour swatches: (label, colour) each."""
    from matplotlib.patches import Patch

    return [Patch(color=color, label=label) for label, color in entries]


def line_handle(**style: Any) -> Line2D:
    """A legend entry for a line drawn across an axis (chance, a limit, the judges' mean)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **style)


def accuracy_plot(index: MetricIndex, conditions: list[str]) -> Figure | None:
    conds = index.conditions(Metric.STRICT_ACCURACY, conditions)
    if not conds:
        return None
    judges = index.judges
    colors = judge_palette(index)
    panels = [(Metric.STRICT_ACCURACY, "Strict accuracy (Wilson 95% CI)")]
    if index.has(Metric.TIE_HALF_ACCURACY):
        panels.append((Metric.TIE_HALF_ACCURACY, "Tie-half accuracy (normal 95% CI)"))
    # panels stacked, each full width: side by side, the bars and their labels would not fit
    fig = figure(_group_width(len(conds), len(judges)), 0.9 + 3.4 * len(panels))
    axes = fig.subplots(len(panels), 1, sharey=True, squeeze=False)[:, 0]
    values: list[float] = []
    mean_drawn = False
    for ax, (metric, heading) in zip(axes, panels, strict=True):

        def get(cond: str, judge: str, metric: str = metric) -> MetricRecord | None:
            return index.get(judge, metric, cond)

        def mean(cond: str, metric: str = metric) -> MetricRecord | None:
            return index.get(MEAN_JUDGE, metric, cond)

        values.extend(_grouped_bars(ax, conds, judges, get, colors))
        if len(judges) > 1:
            mean_drawn |= _mean_marks(ax, conds, mean)
        ax.axhline(50.0, color=CHANCE_GREY, linestyle="--", linewidth=1, zorder=4)
        title(ax, heading)
    if not values:  # measured nowhere (every call missing): no empty chart
        return None
    axes[0].set_ylim(0, 108)  # a proportion starts at 0: bar lengths compare
    for ax in axes:
        ax.set_yticks(list(range(0, 101, 10)))
        ax.set_ylabel("% of answered judgments")
    chance = line_handle(color=CHANCE_GREY, linestyle="--", linewidth=1, label="chance (50%)")
    extra: list[Artist] = [_mean_handle()] if mean_drawn else []
    top_legend(fig, [*series_handles(colors, judges), *extra, chance], "judge")
    return fig


def flips_plot(index: MetricIndex, conditions: list[str], threshold: float) -> Figure | None:
    pairs = index.pairs(Metric.FLIP_RATE, conditions)
    if not pairs:
        return None
    judges = index.judges
    colors = judge_palette(index)
    fig = figure(_group_width(len(pairs), len(judges)), 4.6)
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
    title(ax, "Flip rate with Wilson 95% CI" + (" (solid part: A/B reversals)" if reversal_drawn else ""))
    limit = line_handle(
        color=LIMIT_RED, linestyle="--", linewidth=1, label=f"max flip rate {100 * threshold:g}%"
    )
    extra: list[Artist] = [_mean_handle()] if mean_drawn else []
    top_legend(fig, [*series_handles(colors, judges), *extra, limit], "judge")
    return fig


def position_plot(index: MetricIndex, conditions: list[str], limit: float | None = None) -> Figure | None:
    """Bars per condition and judge; `limit`: the readiness baseline's limit on en position
    inconsistency (ReportSettings.max_position_inconsistency), drawn as a dashed line."""
    conds = index.conditions(Metric.POSITION_INCONSISTENCY, conditions)
    if not conds:
        return None
    judges = index.judges
    fig = figure(_group_width(len(conds), len(judges)), 4.6)
    ax = fig.subplots()
    colors = judge_palette(index)

    def get(cond: str, judge: str) -> MetricRecord | None:
        return index.get(judge, Metric.POSITION_INCONSISTENCY, cond)

    values = _grouped_bars(ax, conds, judges, get, colors)
    if not values:
        return None
    mean_drawn = len(judges) > 1 and _mean_marks(
        ax, conds, lambda c: index.get(MEAN_JUDGE, Metric.POSITION_INCONSISTENCY, c)
    )
    extra: list[Artist] = [_mean_handle()] if mean_drawn else []
    top = max(values)
    if limit is not None:
        ax.axhline(100.0 * limit, color=LIMIT_RED, linestyle="--", linewidth=1, zorder=4)
        top = max(top, 100.0 * limit)
        label = f"readiness limit in en: {100 * limit:g}%"
        extra.append(line_handle(color=LIMIT_RED, linestyle="--", linewidth=1, label=label))
    ax.set_ylim(0, top * 1.18 + 1)
    ax.set_ylabel("% of items: orig and swap verdicts differ")
    title(ax, "Position inconsistency with Wilson 95% CI")
    top_legend(fig, [*series_handles(colors, judges), *extra], "judge")
    return fig


def tie_probe_plot(index: MetricIndex, conditions: list[str]) -> Figure | None:
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
            label = judge_label(judge, 26).replace("\n", " ") + (f" ({target})" if len(targets) > 1 else "")
            rows.append((label, 100.0 * vals[0], 100.0 * vals[1], 100.0 * vals[2]))
    if not rows:
        return None
    fig = figure(MAX_WIDTH, 1.4 + 0.45 * len(rows))
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
    title(ax, "Tie-probes: the gold output in English vs in the target language")
    handles = patch_handles([(name, color) for name, _, color in segments])
    top_legend(fig, handles, "probe outcome")  # above the title, never over it
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig


def heatmap_plot(
    index: MetricIndex, conditions: list[str], subsets_hint: Sequence[str], chance: float = 0.5
) -> Figure | None:
    """Strict accuracy per subset: one colour scale for every report, 0-100% with chance white in the
    middle (a scale that followed the data made 40% and 80% look far apart when their intervals
    overlap), and in every cell the value over its interval and n."""
    conds = index.conditions(Metric.STRICT_ACCURACY, conditions)
    subsets = leaf_subsets(index.subsets(Metric.STRICT_ACCURACY, subsets_hint)) or [ALL]
    judges = index.rows_judges()
    if not conds or not judges:
        return None
    grid = np.full((len(conds), len(judges), len(subsets)), np.nan)
    notes = np.full((len(conds), len(judges), len(subsets)), "", dtype=object)
    for c, cond in enumerate(conds):
        for j, judge in enumerate(judges):
            for s, subset in enumerate(subsets):
                rec = index.get(judge, Metric.STRICT_ACCURACY, cond, subset)
                if rec is not None and rec.value is not None:
                    grid[c, j, s] = 100.0 * rec.value
                    notes[c, j, s] = _cell_note(rec)
    if np.isnan(grid).all():
        return None
    from matplotlib.colors import TwoSlopeNorm

    norm = TwoSlopeNorm(vcenter=100.0 * chance, vmin=0.0, vmax=100.0)
    # a few conditions: one panel per condition, a row per judge; many (M-RewardBench's 23
    # languages): one panel per judge, a row per condition, so panels never shrink to slivers
    by_judge = len(conds) > MAX_CONDITION_PANELS
    panels = judges if by_judge else conds
    rows = conds if by_judge else [judge_label(j, 26).replace("\n", " ") for j in judges]
    cells = grid.transpose(1, 0, 2) if by_judge else grid
    texts = notes.transpose(1, 0, 2) if by_judge else notes
    panel_w = 0.75 * len(subsets) + 0.6
    width = min(MAX_WIDTH, 2.4 + panel_w * len(panels))
    # a cell's interval and n where they fit; 23 languages x several judges leave a cell too narrow
    # to print them legibly (they overlapped into a smear), and the tables and metrics.csv have them
    # (a cell is drawn about 0.87 of its share of the width left of the labels and the colour bar)
    cell_w = 0.87 * (width - 2.4) / (len(panels) * len(subsets))
    noted = _text_width(max(notes.ravel().tolist(), key=len), NOTE_SIZE) <= cell_w
    fig = figure(width, 2.1 + (0.42 if by_judge else 0.62) * len(rows))
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    image = None
    for p_index, (ax, name) in enumerate(zip(axes, panels, strict=True)):
        image = ax.imshow(cells[p_index], cmap=HEAT_CMAP, norm=norm, aspect="auto")
        for r in range(len(rows)):
            for s in range(len(subsets)):
                v = cells[p_index, r, s]
                far = not np.isnan(v) and abs(v - 100.0 * chance) > 35.0  # dark ends of the scale
                colour = "white" if far else "black"
                text = "n/a" if np.isnan(v) else f"{v:.0f}"
                ax.text(s, r - 0.12, text, ha="center", va="center", fontsize=8, color=colour)
                if noted and not np.isnan(v):
                    ax.text(s, r + 0.24, texts[p_index, r, s], ha="center", va="center", fontsize=NOTE_SIZE,
                            color=colour)  # fmt: skip
        ax.set_xticks(
            range(len(subsets)), [subset_label(s) for s in subsets], rotation=40, ha="right", fontsize=8
        )
        title(ax, judge_label(name, 30).replace("\n", " ") if by_judge else name)
        ax.tick_params(length=0)
    axes[0].set_yticks(range(len(rows)), rows, fontsize=8)
    if image is not None:
        bar = fig.colorbar(image, ax=list(axes), shrink=0.9, pad=0.02, ticks=[0, 25, 100 * chance, 75, 100])
        bar.set_label(f"strict accuracy % (chance {100 * chance:g}% white)", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    what = "cell: %, 95% interval, n judgments" if noted else "cell: %; intervals and n in metrics.csv"
    fig.suptitle(f"Strict accuracy per subset and condition ({what})", fontsize=10)
    return fig


NOTE_SIZE = 5.5  # points: a heatmap cell's interval and n, under its value


def _text_width(text: str, size: float) -> float:
    """`text`'s width in inches at `size` points in matplotlib's default font (no canvas needed)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width, _, _ = TextToPath().get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
    return float(width) / 72.0


def _cell_note(rec: MetricRecord) -> str:
    """`30-62 n=10`: a cell's interval and its number of judgments, so that a 40% beside an 80% on
    ten items each reads as the overlap it is."""
    if rec.ci_low is None or rec.ci_high is None:  # the mean of judges: no interval, n is not items
        return ""
    return f"{100 * rec.ci_low:.0f}-{100 * rec.ci_high:.0f} n={rec.n}"


def subset_label(subset: str) -> str:
    head, _, tail = subset.rpartition("/")
    return f"{tail} ({head[:3]}.)" if head else subset


__all__ = [
    "PALETTE",
    "PLOT_TITLES",
    "figure",
    "judge_label",
    "judge_palette",
    "png",
    "series_handles",
    "top_legend",
]
