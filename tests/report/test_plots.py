"""The figures: they follow the run's target condition, give a judge one colour everywhere, show chance and
start proportions at 0, and never split a word of a label."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as pyplot
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from judgebench.analysis import Analysis, ReportSettings, analyze
from judgebench.analysis.findings import MEAN_JUDGE
from judgebench.palette import MEAN_COLOUR, judge_colors, wrap_label
from judgebench.report import forest, make_plots, plots
from judgebench.report.index import MetricIndex
from tests.analysis.builders import pair, probe


def test_tie_probe_plot_for_a_target_other_than_zh() -> None:
    items = [f"Natural/{i}" for i in range(6)]
    js = [pair("J", i, c, o, "1", 1) for i in items for c in ("en", "ja") for o in ("orig", "swap")]
    js += [probe("J", i, o, v, target="ja") for i in items for o, v in (("en_ja", "tie"), ("ja_en", "ja"))]
    analysis = analyze(js, settings=ReportSettings(bootstrap_samples=0))
    assert any(r.metric == "tie_probe_ja" for r in analysis.records)
    assert "tie_probe" in make_plots(analysis)


# ---- the issue-19 plot rules: one colour per judge everywhere, chance, axes from 0, whole words


def _index(analysis: Analysis) -> MetricIndex:
    return MetricIndex(analysis.records, [j.judge for j in analysis.judges])


def _bar_colours(fig: Figure) -> dict[str, set[str]]:
    """judge -> face colours of its legend-labelled bars, over every axes of a figure."""
    out: dict[str, set[str]] = {}
    for ax in fig.axes:
        for container in ax.containers:
            label = container.get_label()
            if label and not label.startswith("_"):
                for patch in container:
                    if isinstance(patch, Rectangle):
                        out.setdefault(label, set()).add(to_hex(patch.get_facecolor(), keep_alpha=False))
    return out


def test_one_colour_per_judge_in_every_figure(full_analysis: Analysis) -> None:
    index, conds = _index(full_analysis), list(full_analysis.conditions)
    expected = {k: v.lower() for k, v in judge_colors(index.judges, MEAN_JUDGE).items()}
    figures = [
        plots.accuracy_plot(index, conds),
        plots.flips_plot(index, conds, 0.15),
        plots.position_plot(index, conds),
    ]
    for fig in figures:
        assert fig is not None
        colours = _bar_colours(fig)
        assert set(colours) == set(index.judges)  # the mean of judges is no bar of its own
        for judge, seen in colours.items():
            assert seen == {expected[judge]}
    forests = [
        forest.forest(index, conds, full_analysis.settings),
        forest.forest_subsets(index, conds, full_analysis.subsets, 0.15),
    ]
    for fig in forests:
        assert fig is not None
        for ax in fig.axes:
            dots = {to_hex(c, keep_alpha=False) for coll in ax.collections for c in coll.get_facecolors()}
            dots |= {to_hex(c, keep_alpha=False) for coll in ax.collections for c in coll.get_edgecolors()}
            assert dots == {expected[j] for j in index.judges}


def test_colours_follow_names_not_order() -> None:
    a = judge_colors(["b:y", "a:x", "mean"])
    b = judge_colors(["a:x", "b:y"])
    assert a["a:x"] == b["a:x"] and a["b:y"] == b["b:y"] and a["a:x"] != a["b:y"]
    assert a["mean"] == MEAN_COLOUR


def test_accuracy_starts_at_zero_with_a_chance_line(full_analysis: Analysis) -> None:
    fig = plots.accuracy_plot(_index(full_analysis), list(full_analysis.conditions))
    assert fig is not None
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0
        flat = [line.get_ydata() for line in ax.get_lines()]
        assert any(len(y) == 2 and y[0] == y[1] == 50.0 for y in flat)  # the chance line
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "chance (50%)" in legend and "mean of judges (no interval)" in legend


def test_position_and_flips_start_at_zero(full_analysis: Analysis) -> None:
    index, conds = _index(full_analysis), list(full_analysis.conditions)
    for fig in (plots.flips_plot(index, conds, 0.15), plots.position_plot(index, conds)):
        assert fig is not None and fig.axes[0].get_ylim()[0] == 0


def test_forest_plots_are_in_the_report(full_analysis: Analysis) -> None:
    made = make_plots(full_analysis)
    assert {"forest", "forest_flips_subsets"} <= set(made)


def test_the_forest_draws_both_readiness_limits(full_analysis: Analysis) -> None:
    settings = full_analysis.settings
    fig = forest.forest(_index(full_analysis), list(full_analysis.conditions), settings)
    assert fig is not None and len(fig.axes) == 2
    for ax, limit in zip(fig.axes, (settings.max_flip_rate, settings.max_position_increase), strict=True):
        verticals = [line.get_xdata() for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert any(x[0] == x[1] == 100.0 * limit for x in verticals)
    assert fig.axes[0].get_xlim()[0] <= 0.0 and fig.axes[0].get_xlim()[0] >= -1.0  # from 0 (less a margin)


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("GPT-4/Vanilla_NoRules", 10, ["GPT-4/", "Vanilla_NoRules"]),
        ("anthropic:claude-haiku-4-5", 18, ["anthropic:", "claude-haiku-4-5"]),
        ("short", 18, ["short"]),
        ("a very long name of words", 10, ["a very", "long name", "of words"]),
    ],
)
def test_labels_never_split_a_word(text: str, width: int, lines: list[str]) -> None:
    assert wrap_label(text, width) == lines
    assert plots.judge_label(text, width) == "\n".join(lines)


def test_bbe_figure_colours_a_name_alike_in_both_panels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgebench.bbe import plot as bbe_plot
    from judgebench.bbe.scores import ScoreSet
    from judgebench.records.bbe_document import SystemRow

    kept: list[Figure] = []
    monkeypatch.setattr(pyplot, "close", kept.append)  # plot_bbe loads pyplot when it draws
    names = ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5", "GPT-4/Vanilla_NoRules"]
    sets = [
        (
            ScoreSet(
                name=name,
                scale=(0.0, 1.0),
                systems=[name] * 4,
                units=[f"u{i}" for i in range(4)],
                base=np.linspace(0.2, 0.8, 4),
                pair_unit=np.zeros(0, dtype=np.int64),
                pair_score=np.zeros(0),
                pair_kind=[],
            ),
            np.linspace(0.25, 0.75, 4),
        )
        for name in names
    ]
    rows = [
        SystemRow(
            system=n, units=4, raw=0.5, bias_bounded=0.4 + i / 10, rank_raw=i + 1, rank_bias_bounded=3 - i
        )
        for i, n in enumerate(reversed(names))  # the ranking lists them in another order
    ]
    bbe_plot.plot_bbe(tmp_path / "bbe.png", sets, rows, title="A-BB")
    fig = kept[0]
    ax_u, ax_r = fig.axes[:2]
    scatter = {c.get_label(): to_hex(c.get_facecolor()[0], keep_alpha=False) for c in ax_u.collections}
    lines = {
        text.get_text(): to_hex(line.get_color())
        for line, text in zip(ax_r.get_lines(), ax_r.texts[::2], strict=True)
    }
    for name in names:
        label = plots.judge_label(name, 28)
        assert lines[label] == scatter[plots.judge_label(name, 40)]
    assert matplotlib.get_backend().lower() == "agg"


def test_a_one_system_ranking_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgebench.bbe import plot as bbe_plot
    from judgebench.records.bbe_document import SystemRow

    kept: list[Figure] = []
    monkeypatch.setattr(pyplot, "close", kept.append)  # plot_bbe loads pyplot when it draws
    row = SystemRow(system="only", units=4, raw=0.5, bias_bounded=0.4, rank_raw=1, rank_bias_bounded=1)
    bbe_plot.plot_bbe(tmp_path / "bbe.png", [], [row], title="A-BB")
    ax_r = kept[0].axes[1]
    assert ax_r.get_lines() == []  # no lone dot
    assert [t.get_text().split("\n")[0] for t in ax_r.texts] == ["one judge: nothing to rank"]
    assert "two\nor more --model for a ranking" in ax_r.texts[0].get_text()


def test_the_position_increase_per_subset_spans_zero_and_draws_its_own_limit() -> None:
    """Planted: on Natural the zh answers turn order-dependent (increase +100 pp), on Neighbor the en
    ones are order-dependent and the zh ones not (-100 pp): both sides of zero must be on the axis."""
    js = []
    for i in range(8):
        for subset, inconsistent in (("Natural", "zh"), ("Adversarial/Neighbor", "en")):
            item = f"{subset}/{i}"
            for cond in ("en", "zh"):
                swap = "2" if cond == inconsistent else "1"
                js += [pair("J", item, cond, "orig", "1", 1), pair("J", item, cond, "swap", swap, 1)]
    analysis = analyze(js, settings=ReportSettings(bootstrap_samples=0))
    limit = analysis.settings.max_position_increase
    index = _index(analysis)
    fig = forest.forest_subsets(
        index, ["en", "zh"], analysis.subsets, limit, "position_inconsistency_increase"
    )
    assert fig is not None
    ax = fig.axes[0]
    dots = sorted(
        float(x) for coll in ax.collections if isinstance(coll, PathCollection) for x, _ in coll.get_offsets()
    )
    assert dots == [-100.0, 100.0]
    low, high = ax.get_xlim()
    assert low < -100.0 and high > 100.0
    vertical = {float(line.get_xdata()[0]) for line in ax.get_lines()}
    assert vertical == {0.0, 100.0 * limit}  # the zero line and the readiness limit
    assert "position-inconsistency increase" in ax.get_xlabel() and ax.get_title().startswith("en->zh")
    assert "forest_position_subsets" in make_plots(analysis)
    # the flip-rate forest of the same run stays a proportion axis from 0
    flips = forest.forest_subsets(index, ["en", "zh"], analysis.subsets, 0.15)
    assert flips is not None and flips.axes[0].get_xlim()[0] == 0


# ---- many targets (M-RewardBench's 23 languages): the figures stay legible


SUBSETS = ("Natural", *(f"Adversarial/{s}" for s in ("GPTInst", "GPTOut", "Manual", "Neighbor")))


def _many_targets(targets: int, judges: int) -> Analysis:
    """`targets` languages besides en, `judges` judges, LLMBar's five subsets: the by-judge heatmap, a
    grid of per-subset forest panels."""
    conds = ["en", *(f"l{t:02d}" for t in range(targets))]
    js = [
        pair(f"J{j}", f"{subset}/{i}", cond, order, "1" if (i + j + c) % 3 else "2", 1)
        for j in range(judges)
        for subset in SUBSETS
        for i in range(6)
        for c, cond in enumerate(conds)
        for order in ("orig", "swap")
    ]
    return analyze(js, settings=ReportSettings(bootstrap_samples=0), condition_order=conds)


def test_a_heatmap_too_dense_for_its_intervals_says_where_they_are(full_analysis: Analysis) -> None:
    """Three judges and the mean side by side leave cells too narrow for `30-62 n=10` under each value
    (at 23 languages they smeared into each other): the cells show the value, the title says where the
    intervals are. The few-condition run of the same code keeps them (the test above)."""
    many = _many_targets(targets=22, judges=5)
    fig = plots.heatmap_plot(_index(many), list(many.conditions), many.subsets)
    assert fig is not None
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts and not any("n=" in t for t in texts)
    assert all(t.isdigit() or t == "n/a" for t in texts), texts
    assert "intervals and n in metrics.csv" in fig.get_suptitle()
    few = plots.heatmap_plot(_index(full_analysis), list(full_analysis.conditions), full_analysis.subsets)
    assert few is not None and "95% interval, n judgments" in few.get_suptitle()  # n counts judgments


def test_the_per_subset_forest_of_many_targets_names_each_panel_by_its_target() -> None:
    """A grid of panels: each titled by its target alone (the long titles ran into each other), the
    legend's title says what they show, and the x axis is named once per column, under its lowest panel."""
    many = _many_targets(targets=6, judges=2)  # 6 en->x panels: a 4-wide grid, 2 in its second row
    fig = forest.forest_subsets(_index(many), list(many.conditions), many.subsets, 0.15)
    assert fig is not None
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == [f"en->l{t:02d}" for t in range(6)]
    named = [i for i, ax in enumerate(shown) if ax.get_xlabel()]
    assert named == [2, 3, 4, 5]  # columns 3 and 4 end in the first row, 1 and 2 in the second
    assert all(shown[i].xaxis.get_tick_params()["labelbottom"] for i in named)
    legend = fig.legends[0]
    assert legend.get_title().get_text().startswith("Flip rate per subset and target")
    single = _many_targets(targets=1, judges=2)
    one = forest.forest_subsets(_index(single), list(single.conditions), single.subsets, 0.15)
    assert one is not None and one.axes[0].get_title() == "en->l00: flip rate per subset, 95% interval"


def test_titles_placed_outright_are_where_matplotlib_would_place_them(
    full_analysis: Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every title is given its height (plots.TITLE_Y) so that matplotlib does not measure each
    axes' top at every draw: the same PNG bytes as its own placement, for every figure."""
    many = _many_targets(targets=6, judges=2)
    given = [make_plots(full_analysis), make_plots(many)]
    monkeypatch.setattr(plots, "TITLE_Y", None)  # matplotlib places each title itself
    placed = [make_plots(full_analysis), make_plots(many)]
    assert [sorted(p) for p in given] == [sorted(p) for p in placed] and len(given[0]) >= 6
    assert given == placed
