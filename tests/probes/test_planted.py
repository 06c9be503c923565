"""Done-when of issue 31 (probes part): a simulated judge with a planted length bias and template
sensitivity is flagged on exactly those probes, and one with neither on none, with the planted values
inside the intervals over seeds; alone and combined with a language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench import api
from judgebench.analysis.findings import ProbeRow, ReportSettings
from judgebench.api.report import analyze_run
from judgebench.models.sim import load_scenario

N_ITEMS = 160
SEEDS = (1, 2, 3)
CONFIDENCE = 0.99


def _dataset(tmp: Path) -> tuple[Path, Path]:
    """Pairs of similar length (the length pull never fires on the originals); every other one in
    Markdown, so the format probe has items; a zh variant of each."""
    items, variants = [], []
    for i in range(N_ITEMS):
        label = 1 + i % 2
        good = f"The answer to question {i} is {i * 7}, as the working shows."
        bad = f"The answer to question {i} is {i * 7 + 3}, as the working shows."
        if i % 2 == 0:
            good, bad = f"**Answer:** {good}", f"**Answer:** {bad}"
        out1, out2 = (good, bad) if label == 1 else (bad, good)
        items.append({"id": f"Natural/{i}", "subset": "Natural", "instruction": f"Solve question {i}.",
                      "output_1": out1, "output_2": out2, "label": label})  # fmt: skip
        variants.append({"item_id": f"Natural/{i}", "condition": "zh", "instruction": f"解答第{i}题。",
                         "output_1": f"答案：{out1}", "output_2": f"答案：{out2}"})  # fmt: skip
    data, var = tmp / "items.jsonl", tmp / "variants.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items), encoding="utf-8")
    var.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in variants), encoding="utf-8")
    return data, var


def _rows(tmp: Path, seed: int) -> list[ProbeRow]:
    data, var = _dataset(tmp)
    run = tmp / f"run{seed}"
    api.translate(run, api.TranslateRequest(dataset=str(data), conditions="zh", variants_file=var))
    judges = [f"sim:probe-biased/{seed}", f"sim:probe-unbiased/{seed}"]
    api.judge(run, api.JudgeRequest(models=judges, probes="length,format,template", tie_probes=False))
    return analyze_run(run, ReportSettings(confidence=CONFIDENCE)).probe_rows


@pytest.mark.parametrize("seed", SEEDS)
def test_planted_probes_are_flagged_exactly_and_recovered(tmp_path: Path, seed: int) -> None:
    biased = load_scenario("probe-biased")
    rows = _rows(tmp_path, seed)
    by = {(r.judge.split(":")[1].split("/")[0], r.condition): r for r in rows}
    expected = {
        "length": biased.length_bias * biased.acc("en"),
        "zh+length": biased.length_bias * biased.acc("en"),
        "template-1": biased.template_flip,
        "template-2": biased.template_flip,
        "template-3": biased.template_flip,
        "template": biased.template_flip,
    }
    conditions = {"length", "zh+length", "format", "zh+format", "template-1", "template-2", "template-3",
                  "template"}  # fmt: skip
    assert {c for _, c in by} == conditions
    for cond in conditions:
        fair, planted = by[("probe-unbiased", cond)], by[("probe-biased", cond)]
        assert fair.status == "within", (cond, fair)
        assert fair.value == 0.0
        if cond in expected:
            assert planted.status == "flagged", (cond, planted)
            assert planted.ci_low is not None and planted.ci_high is not None
            assert planted.ci_low <= expected[cond] <= planted.ci_high, (cond, expected[cond], planted)
        else:
            assert planted.status == "within", (cond, planted)
    # the combined probe is read against its language, not against en
    assert by[("probe-biased", "zh+length")].pair == "zh->zh+length"
    # length moves verdicts one way (towards the padded rejected answer): McNemar sees only b
    length = by[("probe-biased", "length")]
    assert length.mcnemar_c == 0 and (length.mcnemar_b or 0) > 0 and (length.mcnemar_p or 1.0) < 0.001
    pooled = by[("probe-biased", "template")]
    share = 1.0 - (1.0 - biased.template_flip) ** 6  # 2 orders x 3 templates, any one moved
    assert pooled.dependent_low is not None and pooled.dependent_high is not None
    assert pooled.dependent_low <= share <= pooled.dependent_high
    assert by[("probe-unbiased", "template")].dependent_share == 0.0
