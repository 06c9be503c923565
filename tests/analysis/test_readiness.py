"""Readiness verdicts from confidence bounds against the user's thresholds."""

from __future__ import annotations

import numpy as np
import pytest

from judgebench.analysis import ReportSettings, analyze
from judgebench.records import Judgment
from tests.analysis.builders import pair


def judge_run(judge: str, items: int, flip_share: float, seed: int = 0) -> list[Judgment]:
    """en answers always correct and order-consistent; zh flips both orders of a share of the items."""
    rng = np.random.default_rng(seed)
    out = []
    flipped = set(rng.choice(items, size=round(flip_share * items), replace=False).tolist())
    for i in range(items):
        item = f"Natural/{i}"
        for order in ("orig", "swap"):
            out.append(pair(judge, item, "en", order, "1", 1))
            out.append(pair(judge, item, "zh", order, "2" if i in flipped else "1", 1))
    return out


@pytest.fixture(scope="module")
def verdicts() -> dict[str, object]:
    js = judge_run("steady", 419, 0.0) + judge_run("flippy", 419, 0.4) + judge_run("few", 12, 1 / 12)
    analysis = analyze(js, settings=ReportSettings(bootstrap_samples=300))
    return {v.judge: v for v in analysis.readiness}


def test_pass_fail_inconclusive(verdicts: dict[str, object]) -> None:
    steady, flippy, few = verdicts["steady"], verdicts["flippy"], verdicts["few"]
    assert steady.status == "pass" and steady.condition == "zh"  # type: ignore[attr-defined]
    assert flippy.status == "fail"  # type: ignore[attr-defined]
    assert few.status == "inconclusive"  # type: ignore[attr-defined]


def test_reasons_state_the_numbers(verdicts: dict[str, object]) -> None:
    reasons = " ".join(verdicts["flippy"].reasons)  # type: ignore[attr-defined]
    assert "flip rate en->zh 40.1%" in reasons and "15.0%" in reasons and "above" in reasons
    assert "bootstrap" in reasons and "n = 838 pairs" in reasons
    assert "position inconsistency" in reasons


def test_thresholds_are_settings() -> None:
    js = judge_run("flippy", 419, 0.4)
    lenient = analyze(js, settings=ReportSettings(bootstrap_samples=200, max_flip_rate=0.6)).readiness
    assert [v.status for v in lenient] == ["pass"]


def test_without_bootstrap_uses_the_item_score_intervals() -> None:
    """Bootstrap off: the item-level interval is the score interval on the items alone (Wilson for
    the flip rate, Tango for the paired increase), never the pairs' Wilson or a Wald interval."""
    js = judge_run("flippy", 419, 0.4)
    (verdict,) = analyze(js, settings=ReportSettings(bootstrap_samples=0)).readiness
    assert verdict.status == "fail"
    assert "item-level (Wilson on 419 items)" in verdict.reasons[0]
    assert "item-level (Tango on 419 items)" in verdict.reasons[1]


def test_position_increase_fails_a_judge_that_only_gets_order_sensitive() -> None:
    out = []
    for i in range(300):
        item = f"Natural/{i}"
        out += [pair("J", item, "en", "orig", "1", 1), pair("J", item, "en", "swap", "1", 1)]
        # in zh a third of the items flip only in the swapped order: position-driven flips
        out += [
            pair("J", item, "zh", "orig", "1", 1),
            pair("J", item, "zh", "swap", "2" if i % 3 == 0 else "1", 1),
        ]
    (verdict,) = analyze(out, settings=ReportSettings(bootstrap_samples=200, max_flip_rate=0.5)).readiness
    assert verdict.status == "fail"
    assert "above the limit +5.0 pp" in verdict.reasons[1]


def test_an_en_only_judge_gets_its_baseline_and_never_a_pass() -> None:
    """PROTOCOL §4: the baseline is a verdict per judge; with no target, invariance is not assessed."""
    js = [pair("J", f"Natural/{i}", "en", o, "1", 1) for i in range(300) for o in ("orig", "swap")]
    (verdict,) = analyze(js, settings=ReportSettings(bootstrap_samples=0)).readiness
    assert (verdict.condition, verdict.baseline, verdict.invariance) == ("en", "pass", "inconclusive")
    assert verdict.status == "inconclusive" and "invariance not assessed" in verdict.reasons[0]
    assert not any("more items" in r for r in verdict.reasons)
    assert "more en items cannot give one" in verdict.reasons[0]


MORE = "more items (or a less variable judge) are needed to decide"


def test_more_items_is_said_only_where_an_interval_straddles_a_limit(verdicts: dict[str, object]) -> None:
    few, steady = verdicts["few"], verdicts["steady"]
    assert few.status == "inconclusive" and MORE in few.reasons  # type: ignore[attr-defined]
    assert MORE not in steady.reasons  # type: ignore[attr-defined]


def test_a_judge_with_no_answers_is_told_to_retry_not_to_judge_more_items() -> None:
    js = judge_run("ok", 60, 0.0)
    for i in range(60):
        for cond in ("en", "zh"):
            js += [pair("dead", f"Natural/{i}", cond, order, None, 1) for order in ("orig", "swap")]
    by = {v.judge: v for v in analyze(js, settings=ReportSettings(bootstrap_samples=0)).readiness}
    dead = by["dead"]
    assert (dead.status, dead.baseline, dead.invariance) == ("inconclusive",) * 3
    assert dead.reasons[:2] == [
        f"no answered {c} judgment: all 120 {c} call(s) failed; more items cannot help: rerun "
        "`judgebench judge` to retry them (and check the judge's key, model and endpoint)"
        for c in ("zh", "en")
    ]
    assert MORE not in dead.reasons


def test_a_judge_not_judged_in_a_target_is_told_so() -> None:
    """One judge judged in en and zh, another in en only: the second one's zh verdict says it was
    not judged in zh (more items cannot help), not that it needs more items."""
    js = judge_run("both", 300, 0.0) + [
        pair("en-only", f"Natural/{i}", "en", order, "1", 1) for i in range(300) for order in ("orig", "swap")
    ]
    by = {v.judge: v for v in analyze(js, settings=ReportSettings(bootstrap_samples=0)).readiness}
    v = by["en-only"]
    assert (v.condition, v.baseline, v.invariance, v.status) == ("zh", "pass", "inconclusive", "inconclusive")
    assert v.reasons[0].startswith("no zh judgment of this judge: it was not judged in zh; more items cannot")
    assert MORE not in v.reasons


def _target_on_few_items(judge: str, en_items: int, target_items: int) -> list[Judgment]:
    """A clean judge: en on many items, the target on only the first few; never a flip."""
    js = judge_run(judge, target_items, 0.0)
    return js + [pair(judge, f"Natural/{i}", "en", o, "1", 1) for i in range(target_items, en_items)
                 for o in ("orig", "swap")]  # fmt: skip


@pytest.mark.parametrize("samples", [300, 0])
def test_a_clean_target_on_five_items_is_not_a_pass(samples: int) -> None:
    """Issue 40: 5 items, no flip: the bootstrap interval is [0, 0], yet this says nothing about a
    15% limit. The item-level interval (Wilson on 5 items: up to 43%) and the minimum of 20 items
    keep it inconclusive; the reason quotes the interval that decided, and the minimum."""
    (verdict,) = analyze(
        _target_on_few_items("few", 100, 5), settings=ReportSettings(bootstrap_samples=samples)
    ).readiness
    assert verdict.baseline == "pass"
    assert (verdict.status, verdict.invariance) == ("inconclusive", "inconclusive")
    flip = verdict.reasons[0]
    assert "0.0%-43.4%" in flip and "Wilson on 5 items" in flip
    assert "only 5 items, fewer than the 20 a pass needs" in flip
    assert verdict.why["invariance"] == flip


def test_a_clean_judge_on_many_items_still_passes_and_the_minimum_is_a_setting() -> None:
    big = analyze(_target_on_few_items("big", 100, 100), settings=ReportSettings(bootstrap_samples=300))
    assert [v.status for v in big.readiness] == ["pass"]
    assert "0.0%-3.7%" in big.readiness[0].reasons[0]  # Wilson on 100 items, not the collapsed [0, 0]
    strict = analyze(
        _target_on_few_items("big", 100, 100), settings=ReportSettings(bootstrap_samples=300, min_items=101)
    )
    assert [v.status for v in strict.readiness] == ["inconclusive"]


def test_five_items_that_all_flip_still_fail() -> None:
    """Below the minimum a part cannot pass, but an interval that is already above the limit fails."""
    js = judge_run("bad", 5, 1.0) + [pair("bad", f"Natural/{i}", "en", o, "1", 1) for i in range(5, 100)
                                     for o in ("orig", "swap")]  # fmt: skip
    (verdict,) = analyze(js, settings=ReportSettings(bootstrap_samples=300)).readiness
    assert verdict.status == "fail" and "above the limit" in verdict.reasons[0]
