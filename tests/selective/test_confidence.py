"""A judge's confidence per item, from hand-made answers: probabilities combined over both orders,
agreement among the answers (orders and repeats) with invalid answers counted and split votes as no
preference, and the choice between the two."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judgebench.errors import InputError
from judgebench.selective import item_confidence

NAN = math.nan


def frame(rows: list[tuple[str, str, str, str | None, float, float, float]]) -> pd.DataFrame:
    """(judge, item, order, verdict, prob_a, prob_b, prob_tie) rows in condition en, 0.01 USD a call."""
    return pd.DataFrame(
        [
            {
                "judge": j,
                "item_id": i,
                "condition": "en",
                "order": o,
                "verdict": v,
                "prob_a": a,
                "prob_b": b,
                "prob_tie": t,
                "cost_usd": 0.01,
            }
            for j, i, o, v, a, b, t in rows
        ]
    )


def by_item(out: pd.DataFrame) -> dict[str, tuple[object, float, int]]:
    return {r.item_id: (r.verdict, r.confidence, r.answers) for r in out.itertuples()}


def test_probabilities_are_mapped_to_outputs_and_averaged_over_orders() -> None:
    answers = frame(
        [
            # orig: A is output_1 at 0.8; swap: A is output_2 at 0.4, so output_1 at 0.6 (B)
            ("j", "x", "orig", "1", 0.8, 0.2, 0.0),
            ("j", "x", "swap", "2", 0.4, 0.6, 0.0),
            # unnormalised, with a tie token: orig (3, 1, 4)/8 -> output_1 .375, tie .5
            ("j", "y", "orig", "tie", 3.0, 1.0, 4.0),
            ("j", "y", "swap", "tie", 1.0, 3.0, 4.0),
        ]
    )
    got = by_item(item_confidence(answers, "probability"))
    assert got["x"][0] == "1" and got["x"][1] == pytest.approx(0.7) and got["x"][2] == 2
    assert got["y"][0] == "tie" and got["y"][1] == pytest.approx(0.5)


def test_agreement_counts_repeats_invalid_answers_and_reads_a_split_as_no_preference() -> None:
    answers = frame(
        [
            *(("j", "a", o, "1", NAN, NAN, NAN) for o in ("orig", "swap", "orig", "swap")),
            ("j", "b", "orig", "1", NAN, NAN, NAN),
            ("j", "b", "swap", "1", NAN, NAN, NAN),
            ("j", "b", "orig", "2", NAN, NAN, NAN),
            ("j", "b", "swap", "invalid", NAN, NAN, NAN),
            ("j", "c", "orig", "1", NAN, NAN, NAN),
            ("j", "c", "swap", "2", NAN, NAN, NAN),
            ("j", "d", "orig", "1", NAN, NAN, NAN),
            ("j", "d", "swap", None, NAN, NAN, NAN),  # a failed call: no answer
            ("j", "e", "orig", None, NAN, NAN, NAN),
            ("j", "e", "swap", None, NAN, NAN, NAN),
        ]
    )
    out = item_confidence(answers, "auto")
    got = by_item(out)
    assert got["a"] == ("1", 1.0, 4)
    assert got["b"] == ("1", 0.5, 4)  # 2 of 4 answers (the invalid one agrees with nothing)
    assert got["c"] == ("tie", 0.0, 2)  # orders disagree: no preference, which no answer gave
    assert got["d"] == ("1", 1.0, 1)
    assert got["e"] == (None, 0.0, 0)  # nothing answered: never kept
    assert set(out["source"].dropna()) == {"agreement"}
    assert out.set_index("item_id").loc["e", "cost_usd"] == pytest.approx(0.02)


def test_auto_uses_probabilities_only_where_every_answer_has_them() -> None:
    rows = [("j", "x", "orig", "1", 0.9, 0.1, 0.0), ("j", "x", "swap", "1", 0.2, 0.8, 0.0)]
    assert set(item_confidence(frame(rows), "auto")["source"]) == {"probability"}
    partial = [*rows, ("j", "y", "orig", "1", NAN, NAN, NAN), ("j", "y", "swap", "1", NAN, NAN, NAN)]
    assert set(item_confidence(frame(partial), "auto")["source"]) == {"agreement"}


def test_asking_for_probabilities_a_judge_never_stored_is_an_error_naming_it() -> None:
    rows = [("cheap", "x", "orig", "1", NAN, NAN, NAN), ("cheap", "x", "swap", "2", NAN, NAN, NAN)]
    with pytest.raises(InputError, match="judge 'cheap' stored no verdict probabilities"):
        item_confidence(frame(rows), "probability")
