"""The metric-name registry and the typed MetricRecord: every name analysis emits is registered,
every field it writes is declared, and metrics.json keeps only the fields that apply."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.subsets import leaf_subsets, subset_sort_key
from judgebench.data.llmbar import LLMBAR_SUBSETS
from judgebench.records import Judgment, Metric, MetricRecord
from judgebench.records.metrics import CORE_FIELDS, HUMAN_METRICS, LENGTH_METRICS, tie_probe_metric
from tests.analysis.builders import pair, probe


def _judgments() -> list[Judgment]:
    items = {"Natural/0": 1, "Natural/1": 2, "Adversarial/Neighbor/0": 1, "Adversarial/GPTInst/0": 2}
    out: list[Judgment] = []
    for judge in ("J", "K"):
        for k, (item, label) in enumerate(items.items()):
            for cond in ("en", "zh", "ls"):
                for order in ("orig", "swap"):
                    verdict = str(label) if (k + len(cond) + len(order)) % 3 else "tie"
                    out.append(pair(judge, item, cond, order, verdict, label, confidence=0.7))
            out += [probe(judge, item, "en_zh", "tie"), probe(judge, item, "zh_en", "zh")]
    return out


@pytest.fixture(scope="module")
def records() -> list[MetricRecord]:
    return analyze(_judgments(), settings=ReportSettings(bootstrap_samples=50)).records


def test_every_emitted_metric_is_registered(records: list[MetricRecord]) -> None:
    emitted = {r.metric for r in records}
    # this run measures every family, zh as target; the leaderboard scores only come with a
    # RewardBench-family dataset (tests/analysis/test_leaderboard.py)
    leaderboard = {Metric.REWARDBENCH_SCORE, Metric.REWARDBENCH_SCORE_DROP}
    # the probe records come with a run judged with --probes, the human ones with `report --human`
    # (tests/human/test_cli.py checks each is emitted there)
    probes = {Metric.PROBE_FLIP_RATE, Metric.PROBE_DEPENDENT_SHARE}
    # the longer-answer win rate needs the items' texts: the report stage adds it (tests/importers)
    # and so do the length artefact's records (tests/analysis/test_metrics.py checks they are emitted)
    texts = {Metric.LONGER_WIN_RATE, *LENGTH_METRICS}
    assert emitted == {str(m) for m in Metric} - leaderboard - probes - HUMAN_METRICS - texts


def test_tie_probe_names() -> None:
    assert tie_probe_metric("zh") == Metric.TIE_PROBE_ZH
    assert tie_probe_metric("en") == Metric.TIE_PROBE_EN and tie_probe_metric("tie") == Metric.TIE_PROBE_TIE
    assert tie_probe_metric("ja") == "tie_probe_ja"


def test_a_metric_is_its_plain_name_in_records_and_json(records: list[MetricRecord]) -> None:
    rec = next(r for r in records if r.metric == Metric.STRICT_ACCURACY)
    assert type(rec.metric) is str
    assert json.loads(rec.model_dump_json())["metric"] == "strict_accuracy"


def test_optional_fields_are_written_only_where_they_apply(records: list[MetricRecord]) -> None:
    mean = next(r for r in records if r.judge == "mean")
    assert list(mean.model_dump()) == [*CORE_FIELDS, "ci_method"]  # core fields always, null or not
    assert mean.ci_low is None and mean.boot_low is None
    mc = next(r for r in records if r.metric == Metric.MCNEMAR and r.judge == "J")
    dumped = json.loads(mc.model_dump_json())
    assert {"b", "c", "p_family", "p_adj", "significant", "underpowered"} <= set(dumped)
    assert dumped["b"] == mc.b and "boot_low" not in dumped
    assert mc.extras() == {k: v for k, v in mc.model_dump().items() if k not in CORE_FIELDS}


def test_round_trip_and_undeclared_fields_are_refused(records: list[MetricRecord]) -> None:
    for rec in records[:50]:
        assert MetricRecord.model_validate_json(rec.model_dump_json()) == rec
    data = records[0].model_dump()
    with pytest.raises(ValidationError):
        MetricRecord.model_validate({**data, "boot_lo": 0.1})


def test_one_subset_order_from_llmbar() -> None:
    names = ["Zeta", "Adversarial/Manual", "Natural", "Adversarial", "all", "Adversarial/Neighbor", "Alpha"]
    assert sorted(names, key=subset_sort_key) == [
        "all",
        "Natural",
        "Adversarial",
        "Adversarial/Neighbor",
        "Adversarial/Manual",
        "Alpha",
        "Zeta",
    ]
    assert leaf_subsets(["all", "Adversarial", *reversed(LLMBAR_SUBSETS)]) == list(LLMBAR_SUBSETS)
