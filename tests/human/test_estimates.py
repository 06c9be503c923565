"""Estimates per source and their edge cases: models named by the items, unanimous labels, too few."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from judgebench.human import output_sources
from judgebench.human.estimates import MIN_LABELLED, estimates
from judgebench.human.labels import HumanValue
from judgebench.human.verdicts import item_verdicts


def test_sources_come_from_the_items_metadata() -> None:
    assert output_sources({"model_1": "gpt", "model_2": "llama"}, 2) == ("gpt", "llama")
    # RewardBench's chosen / rejected, placed by the label: label 2 means output_2 is the chosen one
    assert output_sources({"chosen_model": "gpt", "rejected_model": "llama"}, 2) == ("llama", "gpt")
    assert output_sources({"chosen_model": "gpt"}, 1) is None
    assert output_sources({}, 1) is None


def _verdicts(rows: list[tuple[str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "judge": "J",
            "item_id": [i for i, _ in rows],
            "condition": "en",
            "verdict": [v for _, v in rows],
            "gold": None,
        }
    )


def test_a_win_rate_per_model_counts_each_models_side() -> None:
    # gpt wrote output_1 of a* and output_2 of b*; humans prefer gpt on every a item and no b item
    rows = [(f"a{k}", "1") for k in range(6)] + [(f"b{k}", "1") for k in range(6)] + [("c0", "2")]
    reference: dict[tuple[str, str], HumanValue] = {(f"a{k}", "en"): "1" for k in range(5)}
    reference |= {(f"b{k}", "en"): "1" for k in range(5)}
    sources = {f"a{k}": ("gpt", "llama") for k in range(6)} | {f"b{k}": ("llama", "gpt") for k in range(6)}
    sources["c0"] = ("gpt", "gpt")  # a model against itself says nothing of its win rate
    got = {e.source: e for e in estimates(_verdicts(rows), reference, sources, 0.95, ["en"])}
    assert set(got) == {"gpt", "llama"}
    assert got["gpt"].classical.value == pytest.approx(0.5) and got["llama"].classical.value == pytest.approx(
        0.5
    )
    assert (got["gpt"].n, got["gpt"].n_unlabeled) == (10, 2)
    assert got["gpt"].judge_only == pytest.approx(0.5)


def test_unanimous_labels_get_the_wilson_interval_not_a_zero_width_one() -> None:
    rows = [(f"i{k}", "1") for k in range(12)]
    reference: dict[tuple[str, str], HumanValue] = {(f"i{k}", "en"): "1" for k in range(8)}
    (win,) = estimates(_verdicts(rows), reference, {}, 0.95, ["en"])
    low, high = proportion_confint(8, 8, alpha=0.05, method="wilson")
    assert win.ppi.value == 1.0 and win.lam == 0.0
    assert (win.ppi.ci_low, win.ppi.ci_high) == pytest.approx((low, high))
    assert win.ppi.ci_high - win.ppi.ci_low > 0.2


def test_too_few_labels_give_no_estimate() -> None:
    rows = [(f"i{k}", "1" if k % 2 else "2") for k in range(20)]
    reference: dict[tuple[str, str], HumanValue] = {
        (f"i{k}", "en"): "1" if k % 3 else "2" for k in range(MIN_LABELLED - 1)
    }
    assert estimates(_verdicts(rows), reference, {}, 0.95, ["en"]) == []


def test_the_item_verdict_combines_both_orders() -> None:
    frame = pd.DataFrame(
        {
            "judge": "J",
            "item_id": ["a", "a", "b", "b", "c", "c", "d", "d"],
            "kind": "pair",
            "condition": "en",
            "order": ["orig", "swap"] * 4,
            "verdict": ["1", "1", "1", "2", "invalid", "2", "invalid", None],
            "label": [1.0, 1.0, 2.0, 2.0, float("nan"), float("nan"), 1.0, 1.0],
        }
    )
    got = item_verdicts(frame).set_index("item_id")
    assert got["verdict"].to_dict() == {"a": "1", "b": "tie", "c": "2", "d": None}
    assert got["gold"].to_dict() == {"a": "1", "b": "2", "c": None, "d": "1"}
