"""bbe on LLMBar's published GPT-4 and ChatGPT verdicts (en only): the swap neighbour's plug-in sensitivity
is the positional disagreement computed independently from the imported judgments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from judgebench.analysis import ReportSettings
from judgebench.api import analyze_run, import_llmbar_results
from judgebench.bbe.engine import BBEParams
from judgebench.bbe.sources import bbe_from_run
from judgebench.store.run_folder import RunDir

LLMBAR = Path(__file__).resolve().parents[2] / ".." / "shared" / "llmbar"

pytestmark = pytest.mark.llmbar


def test_published_verdicts(tmp_path: Path) -> None:
    if not (LLMBAR / "Dataset").is_dir():
        pytest.skip("../shared/llmbar is not present")
    run = RunDir(tmp_path / "run")
    for evaluator in ("GPT-4/Vanilla", "ChatGPT/Vanilla"):
        import_llmbar_results(run, LLMBAR, evaluator)
    # Delta here (0.3-0.6) is far above the 0.0354 that alpha 1 allows: shrink (alpha auto)
    result = bbe_from_run(run.path, BBEParams(tau=0.5, delta=0.01, alpha=None)).result
    assert [c.judge for c in result.calibrations] == ["ChatGPT/Vanilla", "GPT-4/Vanilla"]
    verdicts: dict[tuple[str, str], dict[str, str]] = {}
    for line in (run.path / "judgments.jsonl").read_text().splitlines():
        j = json.loads(line)
        verdicts.setdefault((j["judge"], j["item_id"]), {})[j["order"]] = str(j["verdict"])
    report = {
        r.judge: r.value
        for r in analyze_run(run, settings=ReportSettings(bootstrap_samples=0)).records
        if r.metric == "tie_half_accuracy"
        and r.condition == "en"
        and r.subset == "all"
        and not r.filtered
        and r.judge != "mean"
    }
    raw_aggregate = {row.system: row.raw for row in result.systems}
    assert raw_aggregate == pytest.approx(report)  # the system's aggregate is its accuracy (§5)
    for cal in result.calibrations:
        assert cal.d == 838  # 2 x items, PROTOCOL §5
        assert cal.units == 838 - cal.units_dropped.get("invalid", 0)
        assert set(cal.neighbours) == {"swap"}
        value = {"1": 1.0, "2": 0.0, "tie": 0.5}
        sq = [
            (value[v["orig"]] - value[v["swap"]]) ** 2
            for (judge, _), v in verdicts.items()
            if judge == cal.judge and v.get("orig") in value and v.get("swap") in value
        ]
        assert cal.sensitivity_plugin == pytest.approx(math.sqrt(sum(sq) / len(sq)))
        assert cal.feasible
    # ChatGPT is far more position-biased than GPT-4 on LLMBar
    chat, gpt4 = result.calibrations
    assert chat.sensitivity_plugin > gpt4.sensitivity_plugin
    # with the upper bound, fresh draws stay below delta, also from units held out of the estimate
    checked = bbe_from_run(
        run.path, BBEParams(tau=0.5, delta=0.01, alpha=None, upper_bound=True, verify=500)
    ).result
    for cal in checked.calibrations:
        v = cal.verify
        assert v is not None and v.ci_low <= 0.01
        assert v.holdout is not None and v.holdout.ci_low is not None and v.holdout.ci_low <= 0.01
