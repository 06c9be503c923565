"""Calls on single A-BB units (one item in one order), as bbe asks them: a perturbed neighbour, a
fresh neighbour, or a repeat of the identical en input. A neighbour is a `PlannedCall` with a
condition name of its own (the perturbation kind, `fresh-...`); a repeat is a planned call of the
repeat kind (`PlannedCall.repeat`: the i-th re-ask of the en input), recorded under the condition
`repeat-i`. Each is a recorded call of the run's neighbours file and resumes like any judge call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from judgebench.conditions import SOURCE
from judgebench.errors import InputError
from judgebench.judge.call_plan import REPEAT_PREFIX, PlannedCall
from judgebench.records import CallKey, Item, Perturbation, UnitKey
from judgebench.records.family_names import answer_models

# the repeats' units are drawn with bbe's --seed plus this (0 + this for `judge --repeats`), so that
# `bbe` finds the re-asks `judge --repeats K` made (a draw of its own, apart from the perturbations')
REPEAT_SEED = 2_000_003


def unit_item(items: Mapping[str, Item], unit: UnitKey) -> Item:
    item = items.get(unit.item_id)
    if item is None:
        raise InputError(f"item '{unit.item_id}' of the run is not in the dataset", item=unit.item_id)
    return item


def unit_call(
    judge: str,
    item: Item,
    order: str,
    condition: str,
    *,
    texts: tuple[str, str, str] | None = None,
    perturbation: Perturbation | None = None,
    repeat: int = 0,
) -> PlannedCall:
    """One en pair call on `item` in `order`; `texts` (instruction, output_1, output_2, in the
    dataset's order) replace the item's own for a perturbed neighbour; `repeat` i: its i-th re-ask."""
    instruction, first, second = texts or (item.instruction, item.output_1, item.output_2)
    a, b = (first, second) if order == "orig" else (second, first)
    return PlannedCall(
        judge, item.id, item.subset, "pair", condition, order, item.label, instruction, a, b, "English",
        perturbation, models=answer_models(item), repeat=repeat,
    )  # fmt: skip


def repeat_calls(
    judge: str, items: Mapping[str, Item], units: Sequence[UnitKey], repeats: int
) -> list[PlannedCall]:
    """K re-asks of the identical en input of each unit: planned calls of the repeat kind, each its
    own call key (recorded under the condition `repeat-i`)."""
    calls = []
    for unit in units:
        item = unit_item(items, unit)
        calls += [unit_call(judge, item, unit.order, SOURCE, repeat=i) for i in range(1, repeats + 1)]
    return calls


def is_repeat(condition: str) -> bool:
    """Whether a recorded condition names a re-ask (`repeat-i`, `PlannedCall.recorded_condition`)."""
    return condition.startswith(REPEAT_PREFIX) and condition.removeprefix(REPEAT_PREFIX).isdigit()


def repeats_held(keys: Iterable[CallKey]) -> int:
    """How many re-asks per unit a neighbours file holds (`judge --repeats K`); 0 if none."""
    return max(
        (int(k.condition.removeprefix(REPEAT_PREFIX)) for k in keys if is_repeat(k.condition)), default=0
    )
