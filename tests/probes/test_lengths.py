"""Length categories: read from the data where it says, measured otherwise, and a length-biased
judge's accuracy split by them as planted."""

from __future__ import annotations

import json
from pathlib import Path

from judgebench import api
from judgebench.analysis import analyze
from judgebench.analysis.findings import ReportSettings
from judgebench.api.report import analyze_run
from judgebench.models.sim import load_scenario
from judgebench.probes.lengths import CHOSEN_LONGER, REJECTED_LONGER, SIMILAR, length_category
from judgebench.probes.probe_registry import load_probes
from judgebench.records import Item, Judgment
from judgebench.report.report_sections import build_sections
from judgebench.store.run_folder import JUDGMENTS, read_jsonl


def _item(out1: str, out2: str, label: int = 1, subset: str = "Natural", **meta: object) -> Item:
    return Item(
        id="x", subset=subset, instruction="q", output_1=out1, output_2=out2, label=label, metadata=meta
    )


def test_the_data_s_own_category_wins_then_the_subset_s_then_the_lengths() -> None:
    categories = load_probes()["length"].categories
    assert length_category(_item("a", "b" * 50, length_category="mine"), categories) == "mine"
    assert "alpacaeval-length" in length_category(
        _item("a", "b" * 50, subset="alpacaeval-length"), categories
    )
    assert length_category(_item("a" * 50, "b" * 10), categories) == CHOSEN_LONGER
    assert length_category(_item("a" * 50, "b" * 10, label=2), categories) == REJECTED_LONGER
    assert length_category(_item("a" * 50, "b" * 45), categories) == SIMILAR
    assert length_category(Item(id="u", subset="s", instruction="q", output_1="a", output_2="bb"), {}) is None


def test_a_length_biased_judge_is_more_accurate_where_the_chosen_answer_is_longer(tmp_path: Path) -> None:
    rows = []
    for i in range(200):
        short, long = f"It is {i}.", f"It is {i}, which follows from the statement of question {i} directly."
        chosen_longer = i % 2 == 0
        good, bad = (long, short) if chosen_longer else (short, long.replace(f"{i},", f"{i + 1},"))
        rows.append({"id": f"Natural/{i}", "subset": "Natural", "instruction": f"Q{i}?", "output_1": good,
                     "output_2": bad, "label": 1})  # fmt: skip
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp_path / "run"
    judges = ["sim:probe-biased", "sim:probe-unbiased"]
    api.judge(run, api.JudgeRequest(models=judges, dataset=str(data), probes="length"))
    analysis = analyze_run(run, ReportSettings(confidence=0.99))
    found = {(r.judge, r.category): r for r in analysis.length_rows}
    s = load_scenario("probe-biased")
    planted = {
        CHOSEN_LONGER: s.length_bias + (1 - s.length_bias) * s.acc("en"),
        REJECTED_LONGER: (1 - s.length_bias) * s.acc("en"),
    }
    for category, want in planted.items():
        row = found[("sim:probe-biased", category)]
        assert row.items == 100 and row.n == 200
        assert row.ci_low is not None and row.ci_high is not None and row.ci_low <= want <= row.ci_high
        fair = found[("sim:probe-unbiased", category)]
        assert fair.ci_low is not None and fair.ci_high is not None
        assert fair.ci_low <= s.acc("en") <= fair.ci_high
    assert (
        found[("sim:probe-biased", REJECTED_LONGER)].value < found[("sim:probe-biased", CHOSEN_LONGER)].value
    )

    # the same planted values through the length split of the report (issue 47), and the probe read
    # beside it: under the probe the rejected output is padded, so the shorter output wins more often
    split = {
        (r.judge, r.metric, r.condition): r
        for r in analysis.records
        if r.subset == "all" and not r.filtered and r.metric.startswith(("accuracy_gold", "length_baseline"))
    }
    for metric, category in (
        ("accuracy_gold_longer", CHOSEN_LONGER),
        ("accuracy_gold_shorter", REJECTED_LONGER),
    ):
        rec = split[("sim:probe-biased", metric, "en")]
        assert rec.n == 200 and rec.ci_low is not None and rec.ci_high is not None
        assert rec.ci_low <= planted[category] <= rec.ci_high
    base = split[("sim:probe-biased", "length_baseline_shorter_tokens", "en")]
    probed = split[("sim:probe-biased", "length_baseline_shorter_tokens", "length")]
    assert base.value == 0.5 and probed.value is not None and base.value is not None
    assert probed.value > base.value
    (section,) = [s for s in build_sections(analysis) if s.key == "probes"]
    table = next(t for t in section.tables if t.title and "length artefact" in t.title)
    assert {row[0].text for row in table.rows} == set(judges) and table.rows[0][1].text == "en->length"


def test_a_shorter_picking_sim_judge_fails_the_baseline_through_the_pipeline(tmp_path: Path) -> None:
    """Issue 47 through `judge` and the report: LLMBar-shaped items (the gold answer the shorter one in
    about 72% of them). `sim:length-shorter` picks the shorter response: above chance overall, which
    passed the chance baseline, but below it where the gold answer is the longer one, so it fails;
    the unbiased judge is above chance on both sides."""
    rows = []
    for i in range(200):
        short, long = (
            f"It is {i}.",
            f"It is {i}, and here is a long explanation of question {i} that says more.",
        )
        gold_shorter = i % 25 < 18  # 72%
        good, bad = (short, long) if gold_shorter else (long, short)
        one, two, label = (good, bad, 1) if i % 2 else (bad, good, 2)
        rows.append({"id": f"Natural/{i}", "subset": "Natural", "instruction": f"Q{i}?", "output_1": one,
                     "output_2": two, "label": label})  # fmt: skip
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp_path / "run"
    api.judge(run, api.JudgeRequest(models=["sim:length-shorter", "sim:probe-unbiased"], dataset=str(data)))
    settings = ReportSettings(bootstrap_samples=200)
    verdicts = {v.judge: v for v in analyze_run(run, settings).readiness}
    shorter = verdicts["sim:length-shorter"]
    assert shorter.baseline == "fail", shorter.reasons
    assert "gold output is the longer one (by tokens) 0.0%" in shorter.why["baseline"]
    overall = next(r for r in shorter.reasons if r.startswith("en strict accuracy 72.0%"))
    assert "is above chance" in overall  # what the chance line alone read: a pass
    judgments = list(read_jsonl(run / JUDGMENTS, Judgment))
    chance_only = {v.judge: v for v in analyze(judgments, settings=settings).readiness}
    assert chance_only["sim:length-shorter"].baseline == "pass"
    honest = [r for r in verdicts["sim:probe-unbiased"].reasons if "where the gold output is the" in r]
    assert len(honest) == 2 and all("is above chance" in r for r in honest), honest
