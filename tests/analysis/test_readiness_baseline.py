"""The readiness verdict's baseline (PROTOCOL §4): a judge that does not work in en gets no pass, even
when it is perfectly invariant; and an incomplete run gives no pass. Each planted case on each side."""

from __future__ import annotations

import numpy as np
import pytest

from judgebench.analysis import ReadinessVerdict, ReportSettings, analyze
from judgebench.records import CallKey, Judgment
from tests.analysis.builders import pair

ITEMS = 300
CONDITIONS = ("en", "zh")
FAST = ReportSettings(bootstrap_samples=0)
VERDICT = {("orig", "A"): "1", ("orig", "B"): "2", ("swap", "A"): "2", ("swap", "B"): "1"}


def _judge(name: str, letter: object, seed: int = 0) -> list[Judgment]:
    """`letter(rng, label, order)` gives the letter a judge answers; the same in every condition."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(ITEMS):
        label = 1 + i % 2
        answers = {order: letter(rng, label, order) for order in ("orig", "swap")}  # type: ignore[operator]
        for cond in CONDITIONS:
            for order, answer in answers.items():
                verdict = "tie" if answer == "Tie" else VERDICT[(order, answer)]
                out.append(pair(name, f"Natural/{i}", cond, order, verdict, label))
    return out


def _gold(label: int, order: str) -> str:
    return "A" if (label == 1) == (order == "orig") else "B"


def good(rng: np.random.Generator, label: int, order: str) -> str:
    return _gold(label, order)


def always_a(rng: np.random.Generator, label: int, order: str) -> str:
    return "A"


def always_tie(rng: np.random.Generator, label: int, order: str) -> str:
    return "Tie"


def coin(rng: np.random.Generator, label: int, order: str) -> str:
    return "A" if rng.random() < 0.5 else "B"


def _verdict(judgments: list[Judgment], **kwargs: object) -> ReadinessVerdict:
    (verdict,) = analyze(judgments, settings=FAST, **kwargs).readiness  # type: ignore[arg-type]
    return verdict


def test_a_judge_that_works_and_is_invariant_passes() -> None:
    verdict = _verdict(_judge("good", good))
    assert (verdict.status, verdict.baseline, verdict.invariance) == ("pass", "pass", "pass")


@pytest.mark.parametrize(
    ("letter", "reason"),
    [
        (always_a, 'degenerate: answers "A"'),
        (always_tie, 'degenerate: answers "Tie"'),
        (coin, "en position inconsistency"),
    ],
)
def test_useless_but_invariant_judges_fail_on_their_baseline(letter: object, reason: str) -> None:
    verdict = _verdict(_judge("useless", letter))
    assert verdict.invariance == "pass"  # the same answer in every language: perfectly invariant
    assert verdict.baseline == "fail" and verdict.status == "fail"
    assert any(reason in r for r in verdict.reasons), verdict.reasons


def test_always_tie_is_also_at_or_below_chance() -> None:
    verdict = _verdict(_judge("tie", always_tie))
    assert any("is not above chance" in r for r in verdict.reasons), verdict.reasons


def test_baseline_limits_are_settings() -> None:
    lenient = ReportSettings(bootstrap_samples=0, max_position_inconsistency=1.0)
    (verdict,) = analyze(_judge("coin", coin), settings=lenient).readiness
    assert verdict.baseline != "fail"  # the coin's accuracy is still not above chance: inconclusive
    assert any("accuracy" in r and "not clearly above" in r for r in verdict.reasons), verdict.reasons


def test_an_incomplete_run_gives_no_pass_and_says_why() -> None:
    judgments = _judge("good", good)
    done = judgments[:-40]  # an interrupted run: the last 40 planned calls were never made
    planned = {j.call_key() for j in judgments}
    analysis = analyze(done, settings=FAST, planned=planned)
    (verdict,) = analysis.readiness
    assert (verdict.baseline, verdict.invariance) == ("pass", "pass")
    assert verdict.status == "inconclusive" and not verdict.complete
    assert any("incomplete" in r for r in verdict.reasons)
    c = analysis.completeness
    assert (c.plan_known, c.planned, c.never_made, c.failed, c.complete) == (
        True,
        len(judgments),
        40,
        0,
        False,
    )
    (summary,) = analysis.judges
    assert (summary.planned, summary.never_made) == (len(judgments), 40)


def test_failed_calls_also_make_a_run_incomplete() -> None:
    judgments = _judge("good", good)
    judgments[0] = pair("good", judgments[0].item_id, "en", judgments[0].order, None, judgments[0].label or 1)
    analysis = analyze(judgments, settings=FAST, planned={j.call_key() for j in judgments})
    assert analysis.completeness.failed == 1 and analysis.readiness[0].status != "pass"


def test_a_complete_plan_keeps_the_pass() -> None:
    judgments = _judge("good", good)
    planned = {CallKey(*j.call_key()) for j in judgments}
    assert analyze(judgments, settings=FAST, planned=planned).readiness[0].status == "pass"
