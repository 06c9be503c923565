"""Done-when of issue 31 (self-preference): a simulated judge with a planted self-preference is
flagged and one without is not, over 100 seeds, with the planted strength inside the interval; the
verdicts come the real way (items with chosen_model / rejected_model -> plan_calls -> the rendered
prompt -> the sim judge, which knows its family from configs/sim.toml and the answers' families from
configs/model_families.toml -> the parsed verdict). And the report's section and self_preference.json,
with model names and without."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgebench import api
from judgebench.analysis.self_preference_test import item_scores, permutation_interval, self_preference
from judgebench.judge.call_plan import plan_calls
from judgebench.judge.parse import parse_verdict
from judgebench.judge.provider_requests import build_request
from judgebench.judge.templates import load_template
from judgebench.models.base import ProviderSettings
from judgebench.models.client import ModelClient
from judgebench.models.family_table import load_family_table
from judgebench.models.judge_family import judge_family
from judgebench.models.sim import SimProvider, load_scenario
from judgebench.records import Item
from judgebench.records.family_names import FamilyTable, answer_models
from judgebench.records.self_preference_report import NO_MODEL_NAMES

# 200 seeds: the coverage count then has a spread of about 3 (measured coverage of the interval on
# this design: 94.7% over 600 independent replications of numpy draws, so valid at 95%)
SEEDS = range(1000, 1200)
N_ITEMS = 240
PERMUTATIONS = 999
PLANTED, FAIR = "selfpref-openai", "selfpref-none"
# (chosen_model, rejected_model) by item number mod 5: the own (openai) answer gold (0, 1), the other
# answer gold (2, 3), and no single own answer (4: both openai's; 9 mod 10: neither), left out
MODELS = [
    ("gpt-4-0613", "claude-2"),
    ("openai/gpt-4o", "meta-llama/Llama-2-70b-chat-hf"),
    ("claude-3-opus-20240229", "gpt-3.5-turbo"),
    ("human", "GPT4-Turbo"),
    ("gpt-4", "gpt-3.5-turbo"),
]


def _rows(n: int = N_ITEMS) -> list[dict[str, object]]:
    rows = []
    for i in range(n):
        label = 1 + i % 2
        good, bad = f"The answer to {i} is {i * 3}.", f"The answer to {i} is {i * 3 + 1}."
        chosen_model, rejected_model = MODELS[i % 5] if i % 10 != 9 else ("claude-2", "tulu-2-dpo-70b")
        rows.append({"id": f"s/{i}", "subset": "s", "instruction": f"What is {i} times 3?",
                     "output_1": good if label == 1 else bad, "output_2": bad if label == 1 else good,
                     "label": label, "chosen_model": chosen_model,
                     "rejected_model": rejected_model})  # fmt: skip
    return rows


def _items() -> list[Item]:
    out = []
    for row in _rows():
        fields = {k: v for k, v in row.items() if k not in ("chosen_model", "rejected_model")}
        meta = {"chosen_model": row["chosen_model"], "rejected_model": row["rejected_model"]}
        out.append(Item.model_validate({**fields, "metadata": meta}))
    return out


def _verdict_frames(items: list[Item]) -> dict[tuple[str, int], pd.DataFrame]:
    """(scenario, seed) -> the pair verdicts of `sim:scenario/seed` on the items, the real way."""
    calls, _ = plan_calls(items, {}, [], ["j"], tie_probes=False)
    template = load_template()
    requests = [build_request(c, template, ModelClient("sim:unbiased")) for c in calls]
    base = pd.DataFrame({"item_id": [c.item_id for c in calls], "kind": "pair", "condition": "en",
                         "order": [c.order for c in calls], "label": [c.label for c in calls]})  # fmt: skip
    frames = {}
    for scenario in (PLANTED, FAIR):
        for seed in SEEDS:
            provider = SimProvider(f"{scenario}/{seed}", ProviderSettings())

            async def run(p: SimProvider = provider) -> list[str]:
                return [(await p.generate(r)).text for r in requests]

            winners = [parse_verdict(t, template, "json").winner for t in asyncio.run(run())]
            verdicts = [c.verdict_for(w) for c, w in zip(calls, winners, strict=True)]
            frames[(scenario, seed)] = base.assign(judge=f"sim:{scenario}/{seed}", verdict=verdicts)
    return frames


@pytest.fixture(scope="module")
def sweep() -> dict[str, list[tuple[float, float, float, bool]]]:
    """Per scenario, (excess, low, high, flagged) over the seeds."""
    items = _items()
    models = {item.id: answer_models(item) for item in items}
    table = load_family_table()
    out: dict[str, list[tuple[float, float, float, bool]]] = {PLANTED: [], FAIR: []}
    for (scenario, seed), frame in _verdict_frames(items).items():
        judge = f"sim:{scenario}/{seed}"
        report = self_preference(frame, models, {judge: judge_family(judge, table)}, table, conditions=["en"],
                                 permutations=PERMUTATIONS, seed=seed)  # fmt: skip
        (row,) = report.rows
        assert row.family == "openai" and row.condition == "en"
        # items 4 (mod 10) have two openai answers, 9 (mod 10) none: left out; the rest split in two
        assert (row.items, row.own_chosen, row.own_rejected) == (192, 96, 96)
        assert row.excess is not None and row.low is not None and row.high is not None
        out[scenario].append((row.excess, row.low, row.high, row.flagged))
    return out


def test_planted_self_preference_is_flagged_and_inside_the_interval(
    sweep: dict[str, list[tuple[float, float, float, bool]]],
) -> None:
    strength = load_scenario(PLANTED).self_preference
    assert strength > 0
    rows = sweep[PLANTED]
    assert len(rows) >= 100
    covered = sum(low <= strength <= high for _, low, high, _ in rows)
    flagged = sum(flag for *_, flag in rows)
    # an interval covering 94% or more covers fewer than 178 of 200 with probability < 0.1%
    assert covered >= 178, covered
    assert flagged >= 196, flagged  # the excess is 6 standard errors above 0
    excesses = np.array([e for e, *_ in rows])
    assert abs(excesses.mean() - strength) <= 3 * excesses.std(ddof=1) / math.sqrt(len(rows))


def test_a_judge_without_self_preference_is_not_flagged(
    sweep: dict[str, list[tuple[float, float, float, bool]]],
) -> None:
    assert load_scenario(FAIR).self_preference == 0.0 and load_scenario(FAIR).family == "openai"
    rows = sweep[FAIR]
    covered = sum(low <= 0.0 <= high for _, low, high, _ in rows)
    flagged = sum(flag for *_, flag in rows)
    # a flag is a lower bound above 0: 2.5% per seed for a valid interval; 13 or more of 200: < 0.5%
    assert covered >= 178, covered
    assert flagged <= 12, flagged
    excesses = np.array([e for e, *_ in rows])
    assert abs(excesses.mean()) <= 3 * excesses.std(ddof=1) / math.sqrt(len(rows))


def test_the_interval_holds_gold_fixed() -> None:
    """A fair judge whose own family's answers are mostly the gold ones wins for them often, yet
    shows no excess; a judge that always picks its own family's answer has excess 1."""
    # fair: right in 80% of the items of both groups, own gold in 90 of 100 items
    group = np.arange(100) < 90
    correct = np.r_[np.arange(90) % 5 != 0, np.arange(10) % 5 != 0].astype(float)
    assert correct[group].mean() == correct[~group].mean() == 0.8
    low, high, p = permutation_interval(correct, group, confidence=0.95, permutations=999, seed=1)
    assert low < 0.0 < high and p > 0.5
    # always own: correct in every own-gold item, wrong in every other: the excess is 1
    always = group.astype(float)
    low, high, p = permutation_interval(always, group, confidence=0.95, permutations=999, seed=1)
    assert low > 0.5 and high == 1.0 and p < 0.01


def test_item_scores_average_the_orders_and_count_a_tie_half() -> None:
    frame = pd.DataFrame({"item_id": ["a", "a", "b", "b", "c"], "verdict": ["1", "tie", "2", "invalid", "1"],
                          "label": [1, 1, 1, 1, 2]})  # fmt: skip
    # the label as the readers give it: int, float (a column with gaps), text
    for labels in (frame["label"], frame["label"].astype(float), frame["label"].astype(str)):
        scores, own_gold, calls = item_scores(frame.assign(label=labels), {"a": "1", "b": "2"})
        # a: own gold, won 1 and 0.5 -> 0.75 correct; b: own (2) not gold, own won 1 -> correct 0
        assert scores.tolist() == [0.75, 0.0] and own_gold.tolist() == [True, False] and calls == 3


def test_families_are_read_from_the_table() -> None:
    table = load_family_table()
    assert table.of_model("meta-llama/Llama-2-70b-chat-hf") == "meta"
    assert table.of_model("GPT4-Turbo") == "openai" and table.of_model("claude-3-5-sonnet") == "anthropic"
    assert table.of_model("human") is None and table.of_model("") is None
    assert judge_family("openai:ft:my-tune", table) == "openai"  # the provider's family
    assert judge_family("gpt41mini", table, "openai:gpt-4.1-mini") == "openai"  # the recorded spec
    assert judge_family("sim:selfpref-openai/7", table) == "openai"  # the scenario's family
    assert judge_family("sim:unbiased", table) is None and judge_family("someone", table) is None
    item = _items()[1]  # label 2: output_2 is the chosen answer
    assert answer_models(item) == ("meta-llama/Llama-2-70b-chat-hf", "openai/gpt-4o")
    assert answer_models(item.model_copy(update={"label": None})) == (None, None)


def test_a_bad_family_table_names_the_file_and_entry(tmp_path: Path) -> None:
    bad = tmp_path / "families.toml"
    bad.write_text('patterns = [["gpt*"]]\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"patterns\[0\]") as info:
        load_family_table(bad)
    assert str(bad) in str(info.value)


def test_no_model_names_say_so() -> None:
    frame = pd.DataFrame({"judge": ["j"], "item_id": ["a"], "kind": ["pair"], "condition": ["en"],
                          "order": ["orig"], "verdict": ["1"], "label": [1]})  # fmt: skip
    report = self_preference(frame, {"a": (None, None)}, {"j": "openai"}, FamilyTable(), conditions=["en"])
    assert report.note == NO_MODEL_NAMES and report.rows == [] and report.named_items == 0


def _run(tmp: Path, rows: list[dict[str, object]], judges: list[str]) -> dict[str, object]:
    data = tmp / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp / "run"
    api.judge(run, api.JudgeRequest(dataset=str(data), models=judges, tie_probes=False))
    result = api.report(run, api.ReportRequest(html=False))
    section = next(s for s in result.paths.sections if s.key == "self_preference")
    doc = json.loads((run / "self_preference.json").read_text(encoding="utf-8"))
    return {"section": section, "doc": doc}


def test_the_report_flags_exactly_the_planted_judge(tmp_path: Path) -> None:
    out = _run(tmp_path, _rows(), [f"sim:{PLANTED}/3", f"sim:{FAIR}/3"])
    doc = out["doc"]
    assert isinstance(doc, dict) and doc["note"] is None and doc["named_items"] == N_ITEMS
    flags = {row["judge"]: row["flagged"] for row in doc["rows"]}
    assert flags == {f"sim:{PLANTED}/3": True, f"sim:{FAIR}/3": False}
    section = out["section"]
    text = " ".join(cell.text for table in section.tables for row in table.rows for cell in row)  # type: ignore[attr-defined]
    assert "favours own family" in text and "no self-preference shown" in text


def test_the_report_says_when_no_answer_names_its_model(tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if not k.endswith("_model")} for r in _rows(20)]
    out = _run(tmp_path, rows, [f"sim:{PLANTED}/3"])
    assert out["doc"] == {**out["doc"], "note": NO_MODEL_NAMES, "rows": [], "named_items": 0}
    section = out["section"]
    assert section.empty is not None and NO_MODEL_NAMES in section.empty  # type: ignore[attr-defined]


# Issue 40: null scores (0, 0.5, 1) whose permutation p at 0 is 0.12, yet the old bisection put the
# interval's lower bound just above 0 (ties counted at d = 0, broken at any d != 0): flagged, p > 0.05
TIED = [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.5, 0.5, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_the_interval_agrees_with_the_p_value_it_reports() -> None:
    y, g = np.array(TIED), np.array([True] * 8 + [False] * 8)
    low, high, p = permutation_interval(y, g, confidence=0.95, permutations=500, seed=9)
    assert p > 0.05
    assert low <= 0.0 <= high  # 0 is not rejected, so it is inside


def test_the_flag_is_the_test_it_prints() -> None:
    """Over null rows with tied scores: flagged exactly when p < 0.05 (and the excess is positive),
    and then the interval's lower bound is above 0; never a flag with p above the level."""
    g = np.array([True] * 8 + [False] * 8)
    for seed in range(40):
        y = np.random.default_rng(seed).choice([0.0, 0.5, 1.0], size=16, p=[0.3, 0.2, 0.5])
        low, high, p = permutation_interval(y, g, confidence=0.95, permutations=300, seed=seed)
        excess = y[g].mean() - y[~g].mean()
        assert (low > 0.0) == (p < 0.05 and excess > 0.0)
        assert (high < 0.0) == (p < 0.05 and excess < 0.0)
