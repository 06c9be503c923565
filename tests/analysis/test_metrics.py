"""Every PROTOCOL §4 metric on a hand-computed fixture with ties, invalid answers and missing calls.

Fixture (judge J; labels: Natural/0 -> 1, Natural/1 -> 2, Adversarial/Neighbor/0 -> 1,
Adversarial/GPTInst/0 -> 2), verdicts after mapping; "-" is a missing call:

    item                      en orig  en swap  zh orig  zh swap
    Natural/0                 1        1        tie      1
    Natural/1                 2        invalid  1        -
    Adversarial/Neighbor/0    2        tie      2        2
    Adversarial/GPTInst/0     tie      2        invalid  2

Judge K answers every pair call with the label (no flips, no position changes).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.calibration import ece_matrices
from judgebench.analysis.frame import Layout, condition_pairs, judgment_frame, pair_flags
from judgebench.analysis.length_artefact import Lengths, count_tokens, output_lengths
from judgebench.analysis.subsets import subset_groups
from judgebench.api import analyze_run
from judgebench.records import AuditFlag, Judgment, MetricRecord
from judgebench.store.run_folder import AUDIT, JUDGMENTS, JsonlAppender, RunDir
from tests.analysis.builders import pair, probe

LABELS = {"Natural/0": 1, "Natural/1": 2, "Adversarial/Neighbor/0": 1, "Adversarial/GPTInst/0": 2}
J_TABLE = {
    "Natural/0": ("1", "1", "tie", "1"),
    "Natural/1": ("2", "invalid", "1", None),
    "Adversarial/Neighbor/0": ("2", "tie", "2", "2"),
    "Adversarial/GPTInst/0": ("tie", "2", "invalid", "2"),
}
CALLS = (("en", "orig"), ("en", "swap"), ("zh", "orig"), ("zh", "swap"))


def fixture() -> list[Judgment]:
    out = []
    for item, verdicts in J_TABLE.items():
        for (cond, order), verdict in zip(CALLS, verdicts, strict=True):
            out.append(pair("J", item, cond, order, verdict, LABELS[item]))
            out.append(pair("K", item, cond, order, str(LABELS[item]), LABELS[item]))
    probes = {
        "Natural/0": ("tie", "zh"),
        "Natural/1": ("en", "invalid"),
        "Adversarial/Neighbor/0": ("zh", "zh"),
        "Adversarial/GPTInst/0": (None, "tie"),
    }
    for item, (a, b) in probes.items():
        out.append(probe("J", item, "en_zh", a))
        out.append(probe("J", item, "zh_en", b))
    return out


def find(
    records: list[MetricRecord],
    metric: str,
    condition: str,
    *,
    judge: str = "J",
    subset: str = "all",
    filtered: bool = False,
) -> MetricRecord:
    hits = [
        r
        for r in records
        if r.judge == judge
        and r.metric == metric
        and r.condition == condition
        and r.subset == subset
        and r.filtered == filtered
    ]
    assert len(hits) == 1, (judge, metric, condition, subset, filtered, hits)
    return hits[0]


@pytest.fixture(scope="module")
def records() -> list[MetricRecord]:
    return analyze(fixture(), settings=ReportSettings(bootstrap_samples=200)).records


def wilson(k: int, n: int) -> tuple[float, float]:
    return proportion_confint(k, n, alpha=0.05, method="wilson")  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("metric", "condition", "k", "n"),
    [
        ("strict_accuracy", "en", 4, 8),  # invalid counts as wrong; 8 answered
        ("strict_accuracy", "zh", 2, 7),  # the missing call is left out
        ("position_a_rate", "en", 2, 7),  # over the 7 valid
        ("position_a_rate", "zh", 3, 6),
        ("tie_rate", "en", 2, 7),
        ("tie_rate", "zh", 1, 6),
        ("invalid_rate", "en", 1, 8),  # over answered
        ("invalid_rate", "zh", 1, 7),
        ("missing_rate", "zh", 1, 8),
        ("flip_rate", "en->zh", 3, 6),  # 6 (item, order) pairs with both verdicts valid
        ("gold_flip_rate", "en->zh", 2, 6),
        ("flip_reversal_rate", "en->zh", 1, 6),
        ("flip_to_tie_rate", "en->zh", 1, 6),
        ("flip_from_tie_rate", "en->zh", 1, 6),
        ("position_inconsistency", "en", 2, 3),  # Natural/1 has an invalid order
        ("position_inconsistency", "zh", 1, 2),
        ("tie_probe_en", "zh", 1, 6),  # over the 6 valid probes
        ("tie_probe_zh", "zh", 3, 6),
        ("tie_probe_tie", "zh", 2, 6),
        ("tie_probe_invalid_rate", "zh", 1, 7),
        ("tie_probe_en_share", "zh", 1, 4),
    ],
)
def test_proportions(records: list[MetricRecord], metric: str, condition: str, k: int, n: int) -> None:
    rec = find(records, metric, condition)
    assert rec.n == n
    assert rec.value == pytest.approx(k / n)
    low, high = wilson(k, n)
    assert rec.ci_low == pytest.approx(low) and rec.ci_high == pytest.approx(high)
    assert rec.extras().get("ci_method") == "wilson"


def test_tie_half_accuracy_normal_interval(records: list[MetricRecord]) -> None:
    # en scores over the 8 answered: 1, 1, 1, 0 (invalid), 0, 0.5, 0.5, 1
    scores = np.array([1, 1, 1, 0, 0, 0.5, 0.5, 1])
    rec = find(records, "tie_half_accuracy", "en")
    half = sps.norm.ppf(0.975) * scores.std(ddof=1) / math.sqrt(8)
    assert rec.value == pytest.approx(0.625) and rec.n == 8
    assert rec.ci_low == pytest.approx(0.625 - half) and rec.ci_high == pytest.approx(0.625 + half)
    assert find(records, "tie_half_accuracy", "zh").value == pytest.approx(2.5 / 7)


def test_mcnemar(records: list[MetricRecord]) -> None:
    rec = find(records, "mcnemar", "en->zh")
    extra = rec.extras()
    assert (extra["b"], extra["c"], rec.value, rec.n) == (2, 0, 2.0, 6)
    assert rec.p == pytest.approx(sps.binomtest(2, 2, 0.5).pvalue)
    assert rec.ci_low is None and rec.ci_high is None
    # p = 0.5 finds nothing: the smallest detectable effect is reported and far above 5 points
    assert extra["underpowered"] is True
    assert extra.get("mde") is None or extra["mde"] > 0.05
    assert extra["p_adj"] >= rec.p  # type: ignore[operator]


def test_tie_probe_binomial(records: list[MetricRecord]) -> None:
    rec = find(records, "tie_probe_en_share", "zh")
    assert rec.p == pytest.approx(sps.binomtest(1, 4, 0.5).pvalue)
    extra = rec.extras()
    assert extra["mde"] == pytest.approx((sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * 0.5 / 2)
    assert extra["underpowered"] is True


def test_position_increase_is_paired(records: list[MetricRecord]) -> None:
    # items valid in both orders in en and zh: Natural/0 (consistent en, inconsistent zh) and
    # Adversarial/Neighbor/0 (inconsistent en, consistent zh)
    rec = find(records, "position_inconsistency_increase", "en->zh")
    extra = rec.extras()
    assert (rec.value, rec.n, extra["b"], extra["c"], rec.p) == (0.0, 2, 1, 1, 1.0)
    assert rec.ci_low is not None and rec.ci_low <= 0.0 <= rec.ci_high  # type: ignore[operator]


def test_subsets_and_aggregates(records: list[MetricRecord]) -> None:
    assert find(records, "strict_accuracy", "en", subset="Natural").value == pytest.approx(3 / 4)
    adv = find(records, "strict_accuracy", "en", subset="Adversarial")
    assert adv.value == pytest.approx(1 / 4) and adv.n == 4
    assert find(records, "strict_accuracy", "en", subset="Adversarial/GPTInst").value == pytest.approx(1 / 2)
    assert find(records, "flip_rate", "en->zh", subset="Adversarial/Neighbor").value == pytest.approx(1 / 2)


def test_mean_over_judges(records: list[MetricRecord]) -> None:
    rec = find(records, "strict_accuracy", "en", judge="mean")
    assert rec.value == pytest.approx((0.5 + 1.0) / 2) and rec.n == 2
    assert rec.ci_low is None and rec.ci_high is None
    assert find(records, "tie_probe_en", "zh", judge="mean").n == 1  # K has no tie-probes


def test_judge_comparison(records: list[MetricRecord]) -> None:
    rec = find(records, "flip_rate_diff", "en->zh", judge="J vs K")
    extra = rec.extras()
    assert (rec.value, rec.n, extra["b"], extra["c"]) == (0.5, 6, 3, 0)
    assert rec.p == pytest.approx(sps.binomtest(3, 3, 0.5).pvalue)
    assert extra["ci_method"] == "bootstrap"
    pos = find(records, "position_inconsistency_diff", "en", judge="J vs K")
    assert pos.value == pytest.approx(2 / 3) and pos.n == 3


def test_bootstrap_fields(records: list[MetricRecord]) -> None:
    for metric, cond in (
        ("strict_accuracy", "en"),
        ("tie_half_accuracy", "en"),
        ("flip_rate", "en->zh"),
        ("position_inconsistency", "zh"),
    ):
        extra = find(records, metric, cond).extras()
        assert 0.0 <= extra["boot_low"] <= extra["boot_high"] <= 1.0
    k = find(records, "strict_accuracy", "en", judge="K").extras()
    assert k["boot_low"] == k["boot_high"] == 1.0


def test_filtered_tables_drop_flagged_items() -> None:
    recs = analyze(
        fixture(), flagged_items=["Adversarial/Neighbor/0"], settings=ReportSettings(bootstrap_samples=0)
    ).records
    full = find(recs, "strict_accuracy", "en", filtered=False)
    filt = find(recs, "strict_accuracy", "en", filtered=True)
    assert (full.value, full.n) == (0.5, 8)
    assert filt.value == pytest.approx(4 / 6) and filt.n == 6
    assert find(recs, "flip_rate", "en->zh", filtered=True).n == 4
    assert "boot_low" not in full.extras()


def test_bh_within_family(records: list[MetricRecord]) -> None:
    fam = [
        r
        for r in records
        if r.metric == "mcnemar" and r.subset == "all" and not r.filtered and r.judge != "mean"
    ]
    ps = [r.p for r in fam]
    from judgebench.analysis.stats import bh_adjust

    assert [r.extras()["p_adj"] for r in fam] == pytest.approx(bh_adjust(ps))  # type: ignore[arg-type]


def test_calibration(records: list[MetricRecord]) -> None:
    conf = {"Natural/0": 0.9, "Natural/1": 0.8, "Adversarial/Neighbor/0": 0.6, "Adversarial/GPTInst/0": 0.95}
    verdict = {
        "Natural/0": "1",
        "Natural/1": "1",
        "Adversarial/Neighbor/0": "1",
        "Adversarial/GPTInst/0": "2",
    }
    js = [pair("J", i, "en", "orig", verdict[i], LABELS[i], confidence=c) for i, c in conf.items()]
    js.append(pair("J", "Natural/0", "en", "swap", "invalid", 1, confidence=0.99))  # invalid: not calibrated
    recs = analyze(js, settings=ReportSettings(bootstrap_samples=0)).records
    brier = find(recs, "brier", "en")
    assert brier.value == pytest.approx((0.01 + 0.64 + 0.16 + 0.0025) / 4) and brier.n == 4
    assert find(recs, "ece", "en").value == pytest.approx((2 * 0.075 + 0.8 + 0.4) / 4)
    assert find(recs, "mean_confidence", "en").value == pytest.approx((0.9 + 0.8 + 0.6 + 0.95) / 4)
    assert not [r for r in records if r.metric in ("brier", "ece", "mean_confidence")]
    boot = analyze(js, settings=ReportSettings(bootstrap_samples=300)).records
    ece = find(boot, "ece", "en")
    assert ece.extras()["ci_method"] == "bootstrap"
    assert ece.ci_low is not None and ece.ci_high is not None and 0.0 <= ece.ci_low <= ece.ci_high <= 1.0


def test_ece_bootstrap_matrices_reproduce_the_estimate() -> None:
    """With every item drawn once, the bootstrap's ECE arithmetic gives the reported ECE exactly."""
    rng = np.random.default_rng(5)
    js = [
        pair(j, f"Natural/{i}", "en", o, str(rng.integers(1, 3)), 1, confidence=float(rng.random()))
        for j in ("J", "K")
        for i in range(40)
        for o in ("orig", "swap")
    ]
    frame = judgment_frame(js)
    layout = Layout(frame, set())
    keys, gap, count = ece_matrices(layout, pair_flags(frame))
    ones = np.ones((1, len(layout.items)))
    ece = np.abs(ones @ gap).reshape(len(keys), 10).sum(axis=1) / (ones @ count)[0]
    recs = analyze(js, settings=ReportSettings(bootstrap_samples=0)).records
    for k, judge in enumerate(keys["judge"]):
        assert ece[k] == pytest.approx(find(recs, "ece", "en", judge=judge).value)


def test_last_line_per_key_wins_and_judge_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = RunDir(tmp_path)
    run.init()
    with JsonlAppender(run.file(JUDGMENTS)) as out:
        for j in fixture():
            out.append(j)
        # a rerun answers the missing zh swap call of Natural/1 correctly
        out.append(pair("J", "Natural/1", "zh", "swap", "2", 2))
    with JsonlAppender(run.file(AUDIT)) as out:
        out.append(AuditFlag(item_id="Natural/0", condition="zh", field="output_1", rule="empty", detail=""))
    analysis = analyze_run(run, ReportSettings(bootstrap_samples=0))
    acc = find(analysis.records, "strict_accuracy", "zh")
    assert acc.value == pytest.approx(3 / 8) and acc.n == 8
    assert analysis.flagged_items == ["Natural/0"]
    assert find(analysis.records, "strict_accuracy", "zh", filtered=True).n == 6
    summary = {s.judge: s for s in analysis.judges}
    assert (summary["J"].judgments, summary["J"].missing, summary["J"].invalid) == (24, 1, 3)
    assert analysis.conditions == ["en", "zh"]
    assert analysis.subsets[:3] == ["all", "Natural", "Adversarial"]


def test_helpers() -> None:
    assert condition_pairs(["en", "zh", "ls"]) == [("en", "zh"), ("en", "ls"), ("zh", "ls")]
    assert condition_pairs(["zh", "ja"]) == [("zh", "ja")]
    groups = subset_groups(["Natural", "Adversarial/Neighbor", "Adversarial/Manual"])
    assert list(groups) == ["all", "Natural", "Adversarial", "Adversarial/Neighbor", "Adversarial/Manual"]
    assert groups["Adversarial"] == ["Adversarial/Neighbor", "Adversarial/Manual"]
    assert list(subset_groups(["x"])) == ["all", "x"]


def test_three_conditions_name_every_pair() -> None:
    js = [
        pair("J", i, c, o, str(LABELS[i]), LABELS[i])
        for i in LABELS
        for c in ("en", "zh", "ls")
        for o in ("orig", "swap")
    ]
    recs = analyze(js, settings=ReportSettings(bootstrap_samples=0)).records
    flips = {r.condition for r in recs if r.metric == "flip_rate"}
    assert flips == {"en->zh", "en->ls", "zh->ls"}
    assert find(recs, "mcnemar", "en->ls").p == 1.0


def test_empty_input() -> None:
    analysis = analyze([])
    assert analysis.records == [] and analysis.readiness == [] and analysis.judges == []


def test_pairs_are_named_in_the_runs_recorded_condition_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """zh->ls as PROTOCOL names it, from the run's manifest, whatever order lines were written in."""
    from judgebench.records import Condition, Judgment
    from judgebench.records.manifest import TranslateStage

    run = RunDir(tmp_path)
    run.init()
    zh, ls = Condition(name="zh", language="Chinese"), Condition(name="ls", language="Chinese-English")
    run.record_stage("translate", TranslateStage(translator="import:x", conditions=[zh, ls]))
    with JsonlAppender(run.file(JUDGMENTS)) as out:
        for cond in ("ls", "en", "zh"):  # written out of order on purpose
            for order, verdict in (("orig", "1"), ("swap", "2")):
                out.append(
                    Judgment(
                        judge="J",
                        item_id="Natural/0",
                        subset="Natural",
                        kind="pair",
                        condition=cond,
                        order=order,
                        raw="x",
                        winner="A" if order == "orig" else "B",
                        verdict=verdict,
                        label=1,
                    )
                )
    analysis = analyze_run(run, ReportSettings(bootstrap_samples=0))
    assert analysis.conditions == ["en", "zh", "ls"]
    flips = {r.condition for r in analysis.records if r.metric == "flip_rate"}
    assert flips == {"en->zh", "en->ls", "zh->ls"}


def test_mcnemar_with_no_valid_pair_has_p_one_and_joins_no_family() -> None:
    """PROTOCOL §4: p = 1 when b + c = 0, also when no pair is valid (every zh answer invalid)."""
    js = [pair("J", i, "en", o, str(LABELS[i]), LABELS[i]) for i in LABELS for o in ("orig", "swap")]
    js += [pair("J", i, "zh", o, "invalid", LABELS[i]) for i in LABELS for o in ("orig", "swap")]
    recs = analyze(js, settings=ReportSettings(bootstrap_samples=0)).records
    rec = find(recs, "mcnemar", "en->zh")
    extra = rec.extras()
    assert (rec.n, rec.value, rec.p, extra["b"], extra["c"]) == (0, 0.0, 1.0, 0, 0)
    assert extra.get("p_adj") is None and extra.get("significant") is None
    assert extra.get("underpowered") is None  # it tests nothing
    # a second judge with real pairs: the mean over judges is its value alone, n = 1
    js += [
        pair("K", i, c, o, str(LABELS[i]), LABELS[i])
        for i in LABELS
        for c in ("en", "zh")
        for o in ("orig", "swap")
    ]
    js += [pair("K", i, "zh", "orig", str(3 - LABELS[i]), LABELS[i]) for i in LABELS]
    recs = analyze(js, settings=ReportSettings(bootstrap_samples=0)).records
    k = find(recs, "mcnemar", "en->zh", judge="K")
    mean = find(recs, "mcnemar", "en->zh", judge="mean")
    assert k.value == len(LABELS) and (mean.value, mean.n) == (k.value, 1)


@pytest.mark.parametrize(("confidence", "significant"), [(0.95, False), (0.90, True)])
def test_significance_follows_the_confidence_level(confidence: float, significant: bool) -> None:
    """b = 5, c = 0 gives exact p = 0.0625 (BH over one comparison leaves it): significant at the 90%
    level, not at 95% (the report bolds p_adj by the same flag)."""
    items = list(LABELS)[:3]
    js = []
    for i in items:
        for o in ("orig", "swap"):
            js.append(pair("J", i, "en", o, str(LABELS[i]), LABELS[i]))
            wrong = "2" if LABELS[i] == 1 else "1"
            right_in_zh = (i, o) == (items[0], "orig")
            js.append(pair("J", i, "zh", o, str(LABELS[i]) if right_in_zh else wrong, LABELS[i]))
    recs = analyze(js, settings=ReportSettings(bootstrap_samples=0, confidence=confidence)).records
    rec = find(recs, "mcnemar", "en->zh")
    extra = rec.extras()
    assert (extra["b"], extra["c"]) == (5, 0)
    assert rec.p == pytest.approx(0.0625)
    assert extra["significant"] is significant


# The length artefact on the fixture: en outputs per item (output_1, output_2). Natural/0: the gold
# (1) shorter by characters and tokens; Natural/1: the gold (2) longer by both; Neighbor/0: the gold
# (1) shorter by characters (4 < 11) but longer by tokens (4 Chinese characters against 2 words);
# GPTInst/0: equally long (a rule scores half). zh has texts for Natural/0 only.
LENGTH_TEXTS = [
    ("Natural/0", "en", "a b", "a b c d"),
    ("Natural/1", "en", "x", "y y y"),
    ("Adversarial/Neighbor/0", "en", "你好世界", "hello world"),
    ("Adversarial/GPTInst/0", "en", "same", "same"),
    ("Natural/0", "zh", "好的", "好的好的"),
]
# per en judgment of J (orig, swap): correct, the shorter-by-characters credit, the shorter-by-tokens
# credit, whether the gold output is the shorter / longer by tokens
J_EN_UNITS = {
    "Natural/0": ((1, 1), 1.0, 1.0, True, False),
    "Natural/1": ((1, 0), 0.0, 0.0, False, True),  # the swap order's answer is invalid: wrong
    "Adversarial/Neighbor/0": ((0, 0), 1.0, 0.0, False, True),
    "Adversarial/GPTInst/0": ((0, 1), 0.5, 0.5, False, False),
}


@pytest.fixture(scope="module")
def length_records() -> list[MetricRecord]:
    lengths = Lengths(output_lengths(LENGTH_TEXTS))
    return analyze(fixture(), settings=ReportSettings(bootstrap_samples=200), lengths=lengths).records


def test_tokens_are_counted_in_the_texts_own_script() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("你好世界") == 4  # an ideograph is a token of its own
    assert count_tokens("Hello, 世界! snake_case 3.5") == 11  # Hello , 世 界 ! snake _ case 3 . 5
    assert count_tokens("") == 0


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        ("length_baseline_shorter_chars", 5 / 8),  # (2 + 0 + 2 + 1) / 8 judgments
        ("length_baseline_longer_chars", 3 / 8),
        ("length_baseline_shorter_tokens", 3 / 8),  # Neighbor/0 turns: its gold is longer in tokens
        ("length_baseline_longer_tokens", 5 / 8),
        ("accuracy_gold_shorter", 2 / 2),  # Natural/0, both orders right
        ("accuracy_gold_longer", 1 / 4),  # Natural/1 and Neighbor/0: one right of four
    ],
)
def test_length_baselines_and_the_split_by_hand(
    length_records: list[MetricRecord], metric: str, value: float
) -> None:
    rec = find(length_records, metric, "en")
    assert rec.value == pytest.approx(value, abs=1e-12)
    assert rec.n == {"accuracy_gold_shorter": 2, "accuracy_gold_longer": 4}.get(metric, 8)


def test_accuracy_over_the_strongest_rule_with_its_cluster_robust_interval(
    length_records: list[MetricRecord],
) -> None:
    """Strict accuracy 4/8 minus the strongest rule (shorter by characters and longer by tokens tie
    at 5/8: the first one named wins), with the CR1 interval statsmodels gives the per-judgment
    differences clustered by item."""
    import statsmodels.api as sm

    rec = find(length_records, "accuracy_over_length_baseline", "en")
    assert rec.value == pytest.approx(4 / 8 - 5 / 8, abs=1e-12) and rec.n == 8
    assert rec.length_rule == "length_baseline_shorter_chars"
    diffs = np.array([c - credit for c_pair, credit, _, _, _ in J_EN_UNITS.values() for c in c_pair])
    groups = np.repeat(np.arange(4), 2)
    fit = sm.OLS(diffs, np.ones_like(diffs)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    z = sps.norm.ppf(0.975)
    assert rec.ci_low == pytest.approx(fit.params[0] - z * fit.bse[0], abs=1e-9)
    assert rec.ci_high == pytest.approx(fit.params[0] + z * fit.bse[0], abs=1e-9)
    split = find(length_records, "accuracy_gold_longer", "en")
    assert split.k == 1 and split.boot_low is not None and split.boot_high is not None


def test_length_records_follow_the_texts_per_condition_and_subset(length_records: list[MetricRecord]) -> None:
    # zh has texts for Natural/0 only: J's zh judgments there (tie, then right) against its lengths
    zh = find(length_records, "length_baseline_shorter_chars", "zh")
    assert (zh.value, zh.n) == (1.0, 2)
    assert find(length_records, "accuracy_gold_shorter", "zh").value == 0.5
    natural = find(length_records, "length_baseline_shorter_chars", "en", subset="Natural")
    assert (natural.value, natural.n) == (0.5, 4)
    mean = find(length_records, "length_baseline_shorter_chars", "en", judge="mean")
    assert mean.value == pytest.approx(5 / 8)  # K answered the same 8 judgments
    # without texts there is nothing to measure: no length record at all
    assert not any(r.metric.startswith("length_baseline") for r in analyze(fixture()).records)
