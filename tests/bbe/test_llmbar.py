"""bbe on LLMBar's published GPT-4 and ChatGPT verdicts (en only): the swap neighbour's plug-in sensitivity
is the positional disagreement computed independently from the imported judgments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from judgebench.analysis.llmbar_import import import_llmbar_results
from judgebench.bbe.api import bbe_from_run
from judgebench.bbe.engine import BBEParams
from judgebench.rundir import RunDir

LLMBAR = Path(__file__).resolve().parents[2] / ".." / "shared" / "llmbar"

pytestmark = pytest.mark.llmbar


def test_published_verdicts(tmp_path: Path) -> None:
    if not (LLMBAR / "Dataset").is_dir():
        pytest.skip("../shared/llmbar is not present")
    run = RunDir(tmp_path / "run")
    for evaluator in ("GPT-4/Vanilla", "ChatGPT/Vanilla"):
        import_llmbar_results(run, LLMBAR, evaluator)
    result = bbe_from_run(run.path, BBEParams(tau=0.5, delta=0.01, upper_bound=False)).result
    assert [c.judge for c in result.calibrations] == ["ChatGPT/Vanilla", "GPT-4/Vanilla"]
    verdicts: dict[tuple[str, str], dict[str, str]] = {}
    for line in (run.path / "judgments.jsonl").read_text().splitlines():
        j = json.loads(line)
        verdicts.setdefault((j["judge"], j["item_id"]), {})[j["order"]] = str(j["verdict"])
    for cal in result.calibrations:
        assert cal.d == cal.units == 838
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
    # with the upper bound, fresh draws from held-out units stay below delta
    checked = bbe_from_run(run.path, BBEParams(tau=0.5, delta=0.01, verify=500)).result
    for cal in checked.calibrations:
        assert cal.verify is not None and cal.verify.holdout and cal.verify.ci_low <= 0.01
