"""Issue 32, point 6: the report's details a newcomer tripped on. The heat map's colour scale is one
scale (0-100%, chance white in the middle) with each cell's interval and n; the position chart draws
the limit the readiness verdict reads; an unpriced model's cost reads `unpriced` as in the terminal.
The pixels are checked in headless Chromium too; the one-judge A-BB section and the translation's
call count are checked through the CLI (tests/cli/test_first_hour.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import TwoSlopeNorm, to_hex
from matplotlib.image import AxesImage
from PIL import Image

from judgebench.analysis import Analysis, ReportSettings, analyze
from judgebench.analysis.findings import JudgeSummary
from judgebench.report import make_plots, plots, write_report
from judgebench.report.index import MetricIndex
from judgebench.report.report_sections import build_sections
from judgebench.store.run_folder import RunDir
from tests.report.conftest import SETTINGS, make_judgments
from tests.report.test_html_chromium import _script, _share_of


def _pixels(pixels: np.ndarray, hex_colour: str, tol: int = 20) -> int:
    return round(_share_of(pixels, hex_colour, tol) * pixels.shape[0] * pixels.shape[1])


def _index(analysis: Analysis) -> MetricIndex:
    return MetricIndex(analysis.records, [j.judge for j in analysis.judges])


def _images(fig: object) -> list[AxesImage]:
    return [im for ax in fig.axes for im in ax.get_images()]  # type: ignore[attr-defined]


@pytest.mark.parametrize("chance", [0.5, 0.6])
def test_6_the_heatmap_scale_is_0_to_100_with_chance_in_the_middle(
    full_analysis: Analysis, chance: float
) -> None:
    fig = plots.heatmap_plot(
        _index(full_analysis), list(full_analysis.conditions), full_analysis.subsets, chance
    )
    assert fig is not None
    images = _images(fig)
    assert images
    for image in images:
        norm = image.norm
        assert isinstance(norm, TwoSlopeNorm)
        assert (norm.vmin, norm.vcenter, norm.vmax) == (0.0, 100.0 * chance, 100.0)
        # the data's own range does not move the scale: chance is white, the ends are the ends
        assert min(image.cmap(norm(100.0 * chance))[:3]) > 0.95  # white
        assert to_hex(image.cmap(norm(0.0))) == "#67001f" and to_hex(image.cmap(norm(100.0))) == "#053061"
    data = np.concatenate([np.ravel(im.get_array()) for im in images])
    assert np.nanmax(data) - np.nanmin(data) < 100  # planted data spans less than the scale


def test_6_every_heatmap_cell_shows_its_interval_and_n(full_analysis: Analysis) -> None:
    index = _index(full_analysis)
    fig = plots.heatmap_plot(index, list(full_analysis.conditions), full_analysis.subsets)
    assert fig is not None
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    rec = next(
        r
        for r in full_analysis.records
        if r.metric == "strict_accuracy" and r.subset == "Natural" and r.ci_low is not None and not r.filtered
    )
    note = f"{100 * rec.ci_low:.0f}-{100 * rec.ci_high:.0f} n={rec.n}"  # type: ignore[operator]
    assert note in texts, texts
    assert sum(t.count("n=") for t in texts) >= len(full_analysis.subsets)


@pytest.mark.parametrize("limit", [0.20, 0.35])
def test_6_the_position_chart_draws_the_readiness_limit(limit: float) -> None:
    settings = SETTINGS.model_copy(update={"max_position_inconsistency": limit})
    analysis = analyze(make_judgments(), settings=settings)
    fig = make_plots(analysis)  # the figure the report embeds, from the same settings readiness reads
    assert "position" in fig
    built = plots.position_plot(
        _index(analysis), list(analysis.conditions), settings.max_position_inconsistency
    )
    assert built is not None
    dashed = [ln.get_ydata() for ln in built.axes[0].get_lines() if ln.get_linestyle() == "--"]
    assert any(y[0] == y[1] == 100.0 * limit for y in dashed), dashed
    legend = [t.get_text() for t in built.legends[0].get_texts()]
    assert f"readiness limit in en: {100 * limit:g}%" in legend
    # and readiness reads the same figure
    reasons = " ".join(r for v in analysis.readiness for r in v.reasons)
    assert f"the limit {100 * limit:.1f}%" in reasons


def _cost_cells(analysis: Analysis) -> dict[str, str]:
    section = next(s for s in build_sections(analysis) if s.key == "judges")
    return {str(row[0].text): str(row[-1].text) for row in section.tables[0].rows}


def test_6_an_unpriced_model_reads_unpriced_not_a_dash() -> None:
    analysis = analyze(make_judgments(("openai-compatible:m", "GPT-4/Vanilla"), ("en",), tie_probes=False),
                       settings=ReportSettings(bootstrap_samples=0))  # fmt: skip
    by = {j.judge: j for j in analysis.judges}
    priced, imported = by["openai-compatible:m"], by["GPT-4/Vanilla"]
    judges = [
        priced.model_copy(update={"cost_usd": None, "input_tokens": 1000, "output_tokens": 10}),
        imported.model_copy(update={"cost_usd": None, "input_tokens": 0, "output_tokens": 0}),
    ]
    cells = _cost_cells(analysis.model_copy(update={"judges": judges}))
    assert cells == {"openai-compatible:m": "unpriced", "GPT-4/Vanilla": "—"}, cells
    free = [priced.model_copy(update={"cost_usd": 0.0, "input_tokens": 1000})]
    assert _cost_cells(analysis.model_copy(update={"judges": free})) == {"openai-compatible:m": "0.00"}
    assert isinstance(priced, JudgeSummary)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_6_chromium_shows_the_anchored_scale_and_the_position_limit(
    tmp_path: Path, full_analysis: Analysis
) -> None:
    paths = write_report(RunDir(tmp_path), full_analysis)
    assert paths.report_html is not None
    png = _script().screenshot(paths.report_html, tmp_path / "shot.png", width=1300, height=10000)
    pixels = np.asarray(Image.open(png).convert("RGB"))
    # the colour bar spans the whole scale: RdBu's two ends are on screen whatever the data (a few
    # hundred pixels each at this size; a data-range scale would not reach them)
    assert _pixels(pixels, "#67001f") >= 30 and _pixels(pixels, "#053061") >= 30
    assert _pixels(pixels, "#440154") == 0  # viridis, the old data-range scale, is gone
    html = paths.report_html.read_text(encoding="utf-8")
    assert 'id="plot-position"' in html and 'id="plot-subset_heatmap"' in html
