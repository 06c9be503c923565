"""The readiness verdict's baseline (PROTOCOL §4): a judge that does not work in en gets no pass, even
when it is perfectly invariant; and an incomplete run gives no pass. Each planted case on each side."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgebench.analysis import ReadinessVerdict, ReportSettings, analyze
from judgebench.analysis.length_artefact import Lengths, output_lengths
from judgebench.data import load_dataset
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


# --- the length artefact (issue 47): accuracy is read against the strongest length rule -----------
# LLMBar-shaped items: the gold output is the shorter one in 44% of Natural items and 82% of the
# adversarial ones (72% overall, as on LLMBar itself), in characters and in words.
LLMBAR_SHAPE = {
    "Natural": (100, 0.44),
    "Adversarial/Neighbor": (134, 0.88),
    "Adversarial/GPTInst": (92, 0.87),
}


def _llmbar_shaped(seed: int = 3) -> tuple[list[tuple[str, int, str, str]], Lengths]:
    """(item, label, output_1, output_2) and the lengths of its outputs in en and zh (the same shape)."""
    rng = np.random.default_rng(seed)
    items, texts = [], []
    for subset, (count, gold_shorter) in LLMBAR_SHAPE.items():
        for i in range(count):
            label = 1 + int(rng.integers(2))
            short, long = "word " * int(rng.integers(5, 40)), "word " * int(rng.integers(60, 120))
            gold, other = (short, long) if rng.random() < gold_shorter else (long, short)
            one, two = (gold, other) if label == 1 else (other, gold)
            items.append((f"{subset}/{i}", label, one, two))
            texts += [(f"{subset}/{i}", cond, one, two) for cond in CONDITIONS]
    return items, Lengths(output_lengths(texts))


def _judged(name: str, items: list[tuple[str, int, str, str]], pick: object) -> list[Judgment]:
    """`pick(label, output_1, output_2)` gives the output (1 or 2) the judge prefers, in both orders
    and every condition: position-consistent and invariant by construction."""
    out = []
    for item, label, one, two in items:
        choice = str(pick(label, one, two))  # type: ignore[operator]
        out += [
            pair(name, item, cond, order, choice, label) for cond in CONDITIONS for order in ("orig", "swap")
        ]
    return out


def pick_shorter(label: int, one: str, two: str) -> int:
    return 1 if len(one) <= len(two) else 2


def honest(label: int, one: str, two: str) -> int:
    """Right on 85% of items whatever their lengths (a fixed pseudo-random set of misses)."""
    return label if (len(one) * 7 + len(two) * 13) % 100 < 85 else 3 - label


def test_a_shorter_picking_judge_passes_against_chance_but_fails_on_the_split() -> None:
    items, lengths = _llmbar_shaped()
    judgments = _judged("shorter", items, pick_shorter)
    without = _verdict(judgments)  # no texts: accuracy against chance only, as before issue 47
    assert (without.baseline, without.status) == ("pass", "pass")
    assert any("is above chance" in r and "split by length was not read" in r for r in without.reasons)
    verdict = _verdict(judgments, lengths=lengths)
    assert verdict.invariance == "pass"  # length does not change under translation
    assert verdict.baseline == "fail" and verdict.status == "fail"
    reason = verdict.why["baseline"]
    assert reason.startswith("en strict accuracy where the gold output is the longer one (by tokens) 0.0%")
    assert "is not above chance 50.0%: the judge leans to the shorter output" in reason, reason
    overall = next(r for r in verdict.reasons if r.startswith("en strict accuracy 7"))
    assert "is above chance" in overall  # overall it clears chance: the split is what fails it


def test_an_honest_judge_still_passes_on_both_sides_of_the_split() -> None:
    items, lengths = _llmbar_shaped()
    verdict = _verdict(_judged("honest", items, honest), lengths=lengths)
    assert (verdict.baseline, verdict.status) == ("pass", "pass"), verdict.reasons
    sides = [r for r in verdict.reasons if "where the gold output is the" in r]
    assert len(sides) == 2 and all("is above chance" in r for r in sides), sides


def test_data_with_no_item_on_one_side_cannot_tell_the_judge_from_the_rule() -> None:
    """Every gold output the shorter one: a judge and "pick the shorter" are indistinguishable, so
    the baseline is inconclusive and says more of the same items cannot help."""
    items, _ = _llmbar_shaped()
    short_gold = [
        (item, label, one, two) for item, label, one, two in items if _gold_shorter(label, one, two)
    ]
    texts = [(item, cond, one, two) for item, _, one, two in short_gold for cond in CONDITIONS]
    verdict = _verdict(_judged("honest", short_gold, honest), lengths=Lengths(output_lengths(texts)))
    assert verdict.baseline == "inconclusive" and verdict.status == "inconclusive", verdict.reasons
    assert "no en item whose gold output is the longer one" in verdict.why["baseline"]


def _gold_shorter(label: int, one: str, two: str) -> bool:
    gold, other = (one, two) if label == 1 else (two, one)
    return len(gold) < len(other)


@pytest.mark.llmbar
def test_on_llmbar_the_shorter_picking_judge_fails_and_an_honest_one_passes(llmbar_dir: Path) -> None:
    """The real LLMBar (419 items): picking the shorter output scores about 0.72 and passed the
    chance baseline; on the items whose gold output is the longer one it is near 0, and fails. A
    judge right on 85% of items whatever their lengths passes."""
    dataset = load_dataset("llmbar", data_dir=str(llmbar_dir))
    items = [(i.id, int(i.label or 1), i.output_1, i.output_2) for i in dataset.items]
    assert len(items) == 419
    lengths = Lengths(
        output_lengths([(item, c, one, two) for item, _, one, two in items for c in CONDITIONS])
    )
    shorter = _judged("shorter", items, pick_shorter)
    assert _verdict(shorter).baseline == "pass"  # what the chance line alone said
    verdict = _verdict(shorter, lengths=lengths)
    assert verdict.baseline == "fail" and verdict.invariance == "pass", verdict.reasons
    assert "gold output is the longer one" in verdict.why["baseline"]
    honest_verdict = _verdict(_judged("honest", items, honest), lengths=lengths)
    assert honest_verdict.baseline == "pass", honest_verdict.reasons


def test_a_side_of_the_split_on_too_few_items_cannot_pass() -> None:
    """Six items with the gold output the longer, every one right: above chance on its interval would
    be a pass on six items; under `min_items` a side can fail but never pass (as every other check).
    The same judge with the side grown to the threshold passes."""
    items, _ = _llmbar_shaped()
    short_gold = [it for it in items if _gold_shorter(*it[1:])]
    long_gold = [it for it in items if not _gold_shorter(*it[1:])]

    def verdict_with(longer: int) -> ReadinessVerdict:
        chosen = short_gold + long_gold[:longer]
        texts = [(item, cond, one, two) for item, _, one, two in chosen for cond in CONDITIONS]
        right = _judged("right", chosen, lambda label, one, two: label)
        settings = ReportSettings(bootstrap_samples=0, min_items=6 if longer > 6 else 20)
        (v,) = analyze(right, settings=settings, lengths=Lengths(output_lengths(texts))).readiness
        return v

    few = verdict_with(6)
    side = next(r for r in few.reasons if "gold output is the longer" in r)
    assert "only 6 items, fewer than the 20 a pass needs" in side, side
    assert few.baseline == "inconclusive" and few.status == "inconclusive", few.reasons
    enough = verdict_with(8)  # 8 items against a threshold of 6: the same check passes
    assert enough.baseline == "pass", enough.reasons
