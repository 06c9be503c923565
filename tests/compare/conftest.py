"""Judgment tables for the compare tests, built from records or straight from the simulated judge."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgebench.compare.pairing import Side
from judgebench.models.sim import SimScenario, pair_letter
from judgebench.records import Judgment
from judgebench.store.judgment_table import judgment_table

ORDERS = ("orig", "swap")


def verdict_of(letter: str, order: str) -> tuple[str | None, str]:
    """(verdict, winner) of a letter answer: A is output 1 in orig and output 2 in swap."""
    if letter == "invalid":
        return "invalid", "invalid"
    if letter == "Tie":
        return "tie", "Tie"
    first = (letter == "A") == (order == "orig")
    return ("1" if first else "2"), letter


def gold_letter(label: int, order: str) -> str:
    return "A" if (label == 1) == (order == "orig") else "B"


def judgment(
    judge: str, item: str, condition: str, order: str, verdict: str | None, **extra: object
) -> Judgment:
    winner = {"1": "A", "2": "B", "tie": "Tie", "invalid": "invalid"}.get(verdict or "")
    fields: dict[str, object] = dict(
        judge=judge, item_id=item, subset="Natural", kind="pair", condition=condition, order=order,
        verdict=verdict, winner=winner, label=1,
    )  # fmt: skip
    fields.update(extra)
    return Judgment.model_validate(fields)


def side(records: Sequence[Judgment], source: str = "run/judgments.jsonl") -> Side:
    return Side(judgment_table(list(records)).frame, source)


def sim_side(s: SimScenario, judge: str, items: int, conditions: Sequence[str] = ("en", "zh", "ls")) -> Side:
    """What a judge stage of `s` would record on `items` synthetic items (labels alternate), as a
    judgment table, without running the stage: for many seeds at little cost."""
    rows = []
    for n in range(items):
        item, label = f"i{n}", 1 + n % 2
        for condition in conditions:
            for order in ORDERS:
                letter = pair_letter(s, item, order, condition, gold_letter(label, order))
                verdict, winner = verdict_of(letter, order)
                rows.append((judge, item, "Natural", "pair", condition, order, verdict, winner, float(label)))
    columns = ["judge", "item_id", "subset", "kind", "condition", "order", "verdict", "winner", "label"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["line"] = range(len(frame))
    return Side(frame, f"{judge}/judgments.jsonl")
