"""Typed composite keys (issue 25): condition pairs, judge pairs and call keys are named tuples that
write exactly the strings the files always held, and read them back; old files load unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from judgebench.analysis.frame import condition_pairs
from judgebench.execution import existing_judgments
from judgebench.records import CallKey, ConditionPair, JudgePair, PlannedKey
from judgebench.store.run_folder import read_jsonl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_a_condition_pair_is_written_and_read_as_en_arrow_zh() -> None:
    pair = ConditionPair("en", "zh")
    assert str(pair) == f"{pair}" == "en->zh"
    assert ConditionPair.parse("en->zh") == pair and ConditionPair.parse("zh->ls") == ("zh", "ls")
    assert ConditionPair.parse("zh") is None  # a single condition is not a pair
    assert (pair.first, pair.second) == ("en", "zh")


def test_a_judge_pair_is_written_and_read_as_j1_vs_j2() -> None:
    pair = JudgePair("openai:gpt-4.1-mini", "sim:default")
    assert str(pair) == "openai:gpt-4.1-mini vs sim:default"
    assert JudgePair.parse(str(pair)) == pair
    assert JudgePair.parse("sim:default") is None


def test_the_pairs_of_a_run_are_typed_and_ordered_as_before() -> None:
    pairs = condition_pairs(["en", "zh", "ls"])
    assert pairs == [("en", "zh"), ("en", "ls"), ("zh", "ls")]
    assert all(isinstance(p, ConditionPair) for p in pairs)
    assert [str(p) for p in pairs] == ["en->zh", "en->ls", "zh->ls"]


def test_every_pair_name_in_the_fixtures_metrics_parses_back_to_itself() -> None:
    for run in ("run_v0_1_0", "run_main_2026_12"):
        records = json.loads((FIXTURES / run / "metrics.json").read_text())
        conditions = {r["condition"] for r in records if "->" in r["condition"]}
        judges = {r["judge"] for r in records if " vs " in r["judge"]}
        assert conditions and all(str(ConditionPair.parse(c)) == c for c in conditions)
        if run == "run_main_2026_12":  # two judges: judge-vs-judge records
            assert judges == {"sim:biased vs sim:default"}
        assert all(str(JudgePair.parse(j)) == j for j in judges)


def test_call_keys_of_old_files_are_named_and_typed() -> None:
    done = existing_judgments(FIXTURES / "run_v0_1_0" / "judgments.jsonl")
    key = next(iter(done))
    assert isinstance(key, CallKey) and key.kind in ("pair", "tie_probe")
    assert key.call() == f"{key.item_id}/{key.kind}/{key.condition}/{key.order}"
    planned = {p.key() for p in read_jsonl(FIXTURES / "run_main_2026_12" / "plan.jsonl", PlannedKey)}
    answered = set(existing_judgments(FIXTURES / "run_main_2026_12" / "judgments.jsonl"))
    assert planned == answered and len(planned) == 96
