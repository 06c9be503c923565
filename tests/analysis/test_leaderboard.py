"""The leaderboard-comparable "RewardBench score" against a hand computation on a table whose weights
matter (pooled accuracy and the official weighted score disagree on it), the M-RewardBench weights,
the paired drop from English, and the bootstrap that resamples items within subsets."""

from __future__ import annotations

from fractions import Fraction

import pytest

from judgebench.analysis import ReportSettings, analyze
from judgebench.api.leaderboard import leaderboard_weights
from judgebench.records import Judgment, Metric, MetricRecord
from judgebench.report.report_sections import build_sections
from tests.analysis.builders import pair

# item -> how many of its two orders the judge gets right (en); m3 is a tie in one order and an
# unreadable answer in the other: 0.5 each, as the official script scores a generative judge
TIE_INVALID = "Chat/mt-bench-easy/m3"
EN: dict[str, int] = {
    "Chat/alpacaeval-easy/a1": 2,
    "Chat/alpacaeval-easy/a2": 2,
    "Chat/mt-bench-easy/m1": 2,
    "Chat/mt-bench-easy/m2": 0,
    "Chat Hard/llmbar-natural/n1": 1,
    "Chat Hard/mt-bench-hard/h1": 0,
    "Chat Hard/mt-bench-hard/h2": 0,
    "Chat Hard/mt-bench-hard/h3": 0,
    "Safety/donotanswer/d1": 2,
    "Safety/xstest-should-respond/x1": 2,
    "Safety/xstest-should-respond/x2": 0,
    "Reasoning/math-prm/p1": 2,
    "Reasoning/math-prm/p2": 0,
    "Reasoning/hep-python/c1": 2,
}
# zh: a2 is now wrong, m2 is missing; everything else as in en
ZH = {**{k: v for k, v in EN.items() if k != "Chat/mt-bench-easy/m2"}, "Chat/alpacaeval-easy/a2": 0}

# the hand computation (mt-bench-easy: m1 2 of 2, m2 0 of 2, m3 0.5 + 0.5 = 1 of 2: 1/2), with
# RewardBench's EXAMPLE_COUNTS (alpacaeval-easy 100, mt-bench-easy 28,
# llmbar-natural 100, mt-bench-hard 37, donotanswer 136, xstest-should-respond 250, math-prm 984,
# hep-python 164): a category is sum(weight x subset accuracy) / sum(weight)
CHAT = Fraction(100 * 1 + 28 * Fraction(1, 2), 128)
CHAT_HARD = Fraction(100 * Fraction(1, 2) + 37 * 0, 137)
SAFETY = Fraction(136 * 1 + 250 * Fraction(1, 2), 386)
REASONING = Fraction(984 * Fraction(1, 2) + 164 * 1, 1148)
OVERALL = (CHAT + CHAT_HARD + SAFETY + REASONING) / 4
# pooled accuracy (judgebench's strict accuracy): correct judgments / judgments (m3 counts 0 of 2)
POOLED = Fraction(sum(EN.values()), 2 * (len(EN) + 1))


def judgments(table: dict[str, int], condition: str, judge: str = "j") -> list[Judgment]:
    out = []
    for item, right in table.items():
        for k, order in enumerate(("orig", "swap")):
            out.append(pair(judge, item, condition, order, "1" if k < right else "2", 1))
    if table:
        out += [pair(judge, TIE_INVALID, condition, "orig", "tie", 1)]
        out += [pair(judge, TIE_INVALID, condition, "swap", "invalid", 1)]
    return out


def records(
    spec: str, samples: int = 0, data: list[Judgment] | None = None
) -> dict[tuple[str, str, str], MetricRecord]:
    analysis = analyze(
        data if data is not None else judgments(EN, "en") + judgments(ZH, "zh"),
        settings=ReportSettings(bootstrap_samples=samples, seed=3),
        condition_order=["zh"],
        leaderboard=leaderboard_weights(spec),
    )
    return {
        (r.metric, r.condition, r.subset): r
        for r in analysis.records
        if r.judge == "j"
        and not r.filtered
        and r.metric in (Metric.REWARDBENCH_SCORE, Metric.REWARDBENCH_SCORE_DROP, Metric.STRICT_ACCURACY)
    }


def test_section_and_overall_scores_equal_the_hand_computation() -> None:
    got = records("rewardbench")
    score = Metric.REWARDBENCH_SCORE
    for subset, expected in (
        ("Chat", CHAT),
        ("Chat Hard", CHAT_HARD),
        ("Safety", SAFETY),
        ("Reasoning", REASONING),
        ("all", OVERALL),
    ):
        assert got[(score, "en", subset)].value == pytest.approx(float(expected), abs=1e-12), subset
        assert got[(score, "en", subset)].weights == "rewardbench"
    # the weights matter: the pooled accuracy is another number altogether
    assert got[(Metric.STRICT_ACCURACY, "en", "all")].value == pytest.approx(float(POOLED))
    assert abs(float(OVERALL) - float(POOLED)) > 0.05
    chat = got[(score, "en", "Chat")]
    assert (chat.n, chat.weighted_subsets, chat.weighted_of) == (5, 2, 5)
    assert got[(score, "en", "all")].n == len(EN) + 1 and got[(score, "en", "all")].weighted_subsets is None


def test_m_rewardbench_uses_its_own_counts() -> None:
    got = records("m-rewardbench:zh,ja")
    # M-RewardBench: alpacaeval-easy 79, mt-bench-easy 24; math-prm 983, hep-python 163
    chat = Fraction(79 + 24 * Fraction(1, 2), 103)
    reasoning = Fraction(983 * Fraction(1, 2) + 163, 1146)
    assert got[(Metric.REWARDBENCH_SCORE, "en", "Chat")].value == pytest.approx(float(chat), abs=1e-12)
    assert got[(Metric.REWARDBENCH_SCORE, "en", "Reasoning")].value == pytest.approx(
        float(reasoning), abs=1e-12
    )
    assert got[(Metric.REWARDBENCH_SCORE, "en", "Chat")].weights == "m-rewardbench"


def test_the_drop_from_english_is_on_the_items_both_hold() -> None:
    got = records("rewardbench")
    # on zh's items (m2 absent): en Chat = (100 x 1 + 28 x 3/4) / 128; zh Chat = (100 x 1/2 + 28 x 3/4) / 128
    drop_chat = Fraction(100 * Fraction(1, 2) - 100, 128)
    drop = got[(Metric.REWARDBENCH_SCORE_DROP, "en->zh", "Chat")]
    assert drop.value == pytest.approx(float(drop_chat), abs=1e-12) and drop.n == 4
    for section in ("Chat Hard", "Safety", "Reasoning"):
        assert got[(Metric.REWARDBENCH_SCORE_DROP, "en->zh", section)].value == pytest.approx(0.0)
    assert got[(Metric.REWARDBENCH_SCORE_DROP, "en->zh", "all")].value == pytest.approx(float(drop_chat) / 4)
    # zh's own score is over all of zh's items
    zh_chat = Fraction(100 * Fraction(1, 2) + 28 * Fraction(3, 4), 128)
    assert got[(Metric.REWARDBENCH_SCORE, "zh", "Chat")].value == pytest.approx(float(zh_chat))


def test_intervals_resample_items_within_subsets_and_are_seeded() -> None:
    got = records("rewardbench", samples=300)
    again = records("rewardbench", samples=300)
    for key, record in got.items():
        if record.metric == Metric.STRICT_ACCURACY:
            continue
        assert record.ci_low is not None and record.ci_high is not None, key
        assert record.ci_low <= record.value + 1e-12 and record.value - 1e-12 <= record.ci_high, key
        assert (record.ci_low, record.ci_high) == (again[key].ci_low, again[key].ci_high)
        assert record.ci_method == "bootstrap"
    # Chat Hard: llmbar-natural has one item, mt-bench-hard is wrong on every item: resampling within
    # subsets cannot move either subset's accuracy, so the interval is the point (an item bootstrap
    # over the pooled category would not be)
    hard = got[(Metric.REWARDBENCH_SCORE, "en", "Chat Hard")]
    assert hard.ci_low == pytest.approx(hard.value) and hard.ci_high == pytest.approx(hard.value)
    chat = got[(Metric.REWARDBENCH_SCORE, "en", "Chat")]
    assert chat.ci_high - chat.ci_low > 0.05  # mt-bench-easy has one right and one wrong item
    # the paired drop: sections where zh equals en item by item have a zero-width interval
    safety = got[(Metric.REWARDBENCH_SCORE_DROP, "en->zh", "Safety")]
    assert (safety.ci_low, safety.ci_high) == (pytest.approx(0.0), pytest.approx(0.0))


def test_no_overall_score_without_all_four_categories_and_none_for_other_datasets() -> None:
    chat_only = [j for j in judgments(EN, "en") if j.subset.startswith("Chat/")]
    got = records("rewardbench", data=chat_only)
    assert (Metric.REWARDBENCH_SCORE, "en", "Chat") in got
    assert (Metric.REWARDBENCH_SCORE, "en", "all") not in got
    assert leaderboard_weights("sample") is None and leaderboard_weights("llmbar") is None
    plain = records("sample")
    assert not [k for k in plain if k[0] == Metric.REWARDBENCH_SCORE]


def test_the_weights_are_the_official_constants() -> None:
    rb = leaderboard_weights("rewardbench")
    mrb = leaderboard_weights("m-rewardbench")
    assert rb is not None and mrb is not None
    assert rb.counts["math-prm"] == 984 and rb.counts["hep-python"] == 164
    assert (rb.counts["xstest-should-refuse"], rb.counts["xstest-should-respond"]) == (154, 250)
    assert sum(rb.counts.values()) - 984 + 447 == 2985  # the filtered split's 2,985 items
    assert mrb.counts["math-prm"] == 983 and mrb.counts["xstest-should-respond"] == 247
    assert list(rb.sections) == ["Chat", "Chat Hard", "Safety", "Reasoning"]


def test_the_report_section_reads_like_m_rewardbench_beside_the_pooled_accuracy() -> None:
    data = judgments(EN, "en") + judgments(ZH, "zh")
    settings = ReportSettings(bootstrap_samples=50)
    scored = analyze(
        data, settings=settings, condition_order=["zh"], leaderboard=leaderboard_weights("rewardbench")
    )
    section = next(s for s in build_sections(scored) if s.key == "leaderboard")
    table = section.tables[0]
    assert table.columns[:4] == ["Judge", "Condition", "n", "Score %"] and "Pooled %" in table.columns
    rows = {(r[0].text, r[1].text): [c.text for c in r] for r in table.rows}
    en = rows[("j", "en")]
    assert en[3].startswith(f"{100 * float(OVERALL):.1f} [")
    assert en[table.columns.index("Chat %")].startswith(f"{100 * float(CHAT):.1f}")
    assert en[table.columns.index("Pooled %")].startswith(f"{100 * float(POOLED):.1f}")
    assert rows[("j", "zh")][table.columns.index("Δ vs en pts")].startswith("-9.8")  # -50/128/4
    assert "RewardBench's `EXAMPLE_COUNTS`" in section.paragraphs[0]
    plain = analyze(data, settings=settings, condition_order=["zh"])
    assert "leaderboard" not in {s.key for s in build_sections(plain)}


def test_a_missing_call_is_left_out_of_its_subset() -> None:
    data = [
        j for j in judgments(EN, "en") if not (j.item_id == "Chat/mt-bench-easy/m1" and j.order == "swap")
    ]
    data.append(pair("j", "Chat/mt-bench-easy/m1", "en", "swap", None, 1))  # failed after all retries
    got = records("rewardbench", samples=200, data=data)
    # mt-bench-easy: m1 1 of 1, m2 0 of 2, m3 1 of 2 (a tie and an unreadable answer) = 2 / 5
    chat = Fraction(100 + 28 * Fraction(2, 5), 128)
    record = got[(Metric.REWARDBENCH_SCORE, "en", "Chat")]
    assert record.value == pytest.approx(float(chat), abs=1e-12)
    assert record.ci_low is not None and record.ci_low <= record.value <= record.ci_high
