"""The figures follow the run's target condition, whatever it is called."""

from __future__ import annotations

from judgebench.analysis import ReportSettings, analyze
from judgebench.report import make_plots
from tests.analysis.builders import pair, probe


def test_tie_probe_plot_for_a_target_other_than_zh() -> None:
    items = [f"Natural/{i}" for i in range(6)]
    js = [pair("J", i, c, o, "1", 1) for i in items for c in ("en", "ja") for o in ("orig", "swap")]
    js += [probe("J", i, o, v, target="ja") for i in items for o, v in (("en_ja", "tie"), ("ja_en", "ja"))]
    analysis = analyze(js, settings=ReportSettings(bootstrap_samples=0))
    assert any(r.metric == "tie_probe_ja" for r in analysis.records)
    assert "tie_probe" in make_plots(analysis)
