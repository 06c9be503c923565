"""The two conclusions an import adds, planted on each side: a judge that always picks the longer
output reads 1.0 on `longer_win_rate` and one that always picks the shorter 0.0; on unlabelled pairs a
judge that always picks its own family's answer reads an own-family win rate of 1.0 and one that never
does 0.0."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench.analysis import ReportSettings
from judgebench.api import analyze_run, import_judgments
from judgebench.store.run_folder import RunDir
from tests.importers.shapes import write_jsonl


def _rows(pick: str) -> list[dict]:
    """Unlabelled pairs; gpt-4 wrote the longer answer on even items and the shorter on odd ones, and
    `pick` says which output the judge names: `longer`, `shorter`, `own` or `other`."""
    rows = []
    for i in range(16):
        own_first = i % 3 == 0
        long_first = i % 2 == 0
        texts = ("x" * 40, "y" * 5) if long_first else ("x" * 5, "y" * 40)
        models = ("gpt-4", "claude-v1") if own_first else ("claude-v1", "gpt-4")
        own = "1" if own_first else "2"
        longer = "1" if long_first else "2"
        target = longer if pick in ("longer", "shorter") else own
        verdict = target if pick in ("longer", "own") else ("2" if target == "1" else "1")
        for order in ("orig", "swap"):
            rows.append({"item_id": f"q{i}", "judge": "gpt-4", "order": order, "output_1": texts[0],
                         "output_2": texts[1], "instruction": "q", "model_1": models[0], "model_2": models[1],
                         "verdict": verdict})  # fmt: skip
    return rows


@pytest.mark.parametrize(("pick", "longer", "own"), [("longer", 1.0, None), ("shorter", 0.0, None),
                                                      ("own", None, 1.0), ("other", None, 0.0)])  # fmt: skip
def test_planted_sides(tmp_path: Path, pick: str, longer: float | None, own: float | None) -> None:
    run = RunDir(tmp_path / "run")
    import_judgments(run, "generic", [write_jsonl(tmp_path / "log.jsonl", _rows(pick))])
    analysis = analyze_run(run, ReportSettings(bootstrap_samples=0))
    rate = next(r for r in analysis.records if r.metric == "longer_win_rate" and r.subset == "all")
    row = next(r for r in analysis.self_preference.rows if r.judge == "gpt-4")
    assert rate.n == 32 and row.items == 16
    if longer is not None:
        assert rate.value == longer
    if own is not None:
        assert row.own_win_rate == own
