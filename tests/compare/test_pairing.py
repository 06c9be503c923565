"""How `compare` pairs two runs: judges matched by name, one each, or as named; units in one run only
counted; invalid answers compared, failed calls not; runs over other items refused by name."""

from __future__ import annotations

import pytest

from judgebench.compare.drift import drift_rows
from judgebench.compare.pairing import match_judges, outcome, pair_runs
from judgebench.errors import InputError
from tests.compare.conftest import judgment, side


def test_same_names_are_matched_by_name() -> None:
    a = side([judgment("j1", "x", "en", "orig", "1"), judgment("j2", "x", "en", "orig", "1")])
    b = side([judgment("j2", "x", "en", "orig", "2"), judgment("j3", "x", "en", "orig", "1")])
    matches = match_judges(a, b)
    assert [(m.judge_a, m.judge_b, m.how) for m in matches] == [("j2", "j2", "same name")]


def test_one_judge_each_is_matched_and_named_pairs_override() -> None:
    a = side([judgment("old", "x", "en", "orig", "1")])
    b = side([judgment("new", "x", "en", "orig", "1"), judgment("other", "x", "en", "orig", "1")])
    with pytest.raises(InputError, match="--judge-a NAME --judge-b NAME") as err:
        match_judges(a, b)
    assert "A: old; B: new, other" in str(err.value)
    only = side([judgment("new", "x", "en", "orig", "1")], "b/judgments.jsonl")
    assert match_judges(a, only)[0].how == "one judge each"
    named = match_judges(a, b, ["old"], ["other"])
    assert [(m.judge_a, m.judge_b, m.how) for m in named] == [("old", "other", "named")]
    with pytest.raises(InputError, match=r"b/judgments\.jsonl: no judge 'gone' here; its judges: new"):
        match_judges(a, only, ["old"], ["gone"])
    with pytest.raises(InputError, match="in pairs"):
        match_judges(a, b, ["old"], [])


def test_units_in_one_run_only_are_counted_not_dropped() -> None:
    a = side(
        [judgment("j", i, c, o, "1") for i in ("x", "y") for c in ("en", "zh") for o in ("orig", "swap")]
    )
    b = side(
        [judgment("j", i, c, o, "1") for i in ("x", "z") for c in ("en", "ls") for o in ("orig", "swap")]
    )
    units, (cov,) = pair_runs(a, b, match_judges(a, b))
    assert len(units) == 2  # x in en, both orders
    assert (cov.units_a, cov.units_b, cov.units_only_a, cov.units_only_b) == (8, 8, 6, 6)
    assert (cov.items_only_a, cov.items_only_b) == (["y"], ["z"])
    assert (cov.items_only_a_total, cov.items_only_b_total) == (1, 1)
    assert (cov.conditions_only_a, cov.conditions_only_b) == (["zh"], ["ls"])


def test_invalid_is_a_verdict_and_a_failed_call_is_missing() -> None:
    a = side(
        [
            judgment("j", "x", "en", "orig", "1"),
            judgment("j", "x", "en", "swap", "1"),
            judgment("j", "y", "en", "orig", None, error="timeout"),
        ]
    )
    b = side(
        [
            judgment("j", "x", "en", "orig", None, winner="invalid", parse_error="no JSON"),
            judgment("j", "x", "en", "swap", "1"),
            judgment("j", "y", "en", "orig", "2"),
        ]
    )
    assert outcome(b.frame).tolist() == ["invalid", "1", "2"]
    units, _ = pair_runs(a, b, match_judges(a, b))
    (row,) = drift_rows(units, ["en"], 0.95)
    assert (row.units, row.missing, row.compared, row.changed) == (3, 1, 2, 1)
    assert row.transitions == {"1->invalid": 1}
    assert (row.accuracy_a, row.accuracy_b, row.right_to_wrong) == (1.0, 0.5, 1)


def test_an_item_with_another_gold_label_is_another_item() -> None:
    a = side([judgment("j", "x", "en", "orig", "1")], "runs/a/judgments.jsonl")
    b = side([judgment("j", "x", "en", "orig", "1", label=2)], "runs/b/judgments.jsonl")
    with pytest.raises(
        InputError, match=r"runs/a/judgments.jsonl, item x: gold label 1 here but 2 in runs/b"
    ):
        pair_runs(a, b, match_judges(a, b))


def test_runs_with_no_unit_in_common_are_refused_naming_both_files() -> None:
    a = side([judgment("j", "x", "en", "orig", "1")], "runs/a/judgments.jsonl")
    b = side([judgment("j", "q", "zh", "orig", "1")], "runs/b/judgments.jsonl")
    with pytest.raises(InputError) as err:
        pair_runs(a, b, match_judges(a, b))
    text = str(err.value)
    assert text.startswith("runs/a/judgments.jsonl and runs/b/judgments.jsonl: no unit")
    assert "A has 1 item(s) in en (e.g. x), B 1 in zh (e.g. q)" in text
