"""Calls on single units (judge/units.py): bbe's perturbed, fresh and repeated calls, made by the
judge room with the same keys and texts they always had."""

from __future__ import annotations

import pytest

from judgebench.errors import InputError
from judgebench.judge.units import is_repeat, repeat_calls, repeats_held, unit_call, unit_item
from judgebench.records import CallKey, Item, Perturbation, UnitKey

ITEM = Item(id="Natural/3", subset="Natural", instruction="Do it", output_1="one", output_2="two", label=2)


def test_a_unit_call_shows_the_outputs_in_its_order() -> None:
    orig = unit_call("j", ITEM, "orig", "formatting")
    swap = unit_call("j", ITEM, "swap", "formatting")
    assert (orig.output_a, orig.output_b) == ("one", "two") and (swap.output_a, swap.output_b) == (
        "two",
        "one",
    )
    assert orig.key == CallKey("j", "Natural/3", "pair", "formatting", "orig")
    assert orig.label == 2 and orig.language == "English" and orig.perturbation is None


def test_a_perturbed_call_carries_its_texts_and_what_changed() -> None:
    change = Perturbation(field="output_2", operation="bold")
    call = unit_call("j", ITEM, "swap", "formatting", texts=("Do it", "one", "**two**"), perturbation=change)
    assert (call.output_a, call.output_b) == ("**two**", "one") and call.perturbation == change


def test_repeats_are_one_call_key_each_and_are_counted_back() -> None:
    units = [UnitKey("Natural/3", "orig"), UnitKey("Natural/3", "swap")]
    calls = repeat_calls("j", {ITEM.id: ITEM}, units, 3)
    # a repeat is a planned call of its own kind on the en input, not a condition of the plan...
    assert {(c.asks, c.condition, c.language) for c in calls} == {("repeat", "en", "English")}
    assert [c.repeat for c in calls] == [1, 2, 3] * 2
    # ...recorded under `repeat-i`, the neighbours file's format (bbe and old runs read it)
    assert [c.key.condition for c in calls] == ["repeat-1", "repeat-2", "repeat-3"] * 2
    assert [c.context()["condition"] for c in calls] == ["repeat-1", "repeat-2", "repeat-3"] * 2
    assert len({c.key for c in calls}) == 6
    judgment = unit_call("j", ITEM, "orig", "en")
    assert judgment.asks == "judgment" and judgment.key.condition == "en"
    assert calls[0].key != judgment.key and (calls[0].output_a, calls[0].output_b) == ("one", "two")
    assert repeats_held(c.key for c in calls) == 3
    assert repeats_held([CallKey("j", "x", "pair", "formatting", "orig")]) == 0
    assert is_repeat("repeat-2") and not is_repeat("repeat-x") and not is_repeat("en")


def test_a_unit_whose_item_is_gone_is_named() -> None:
    with pytest.raises(InputError, match="Natural/9"):
        unit_item({ITEM.id: ITEM}, UnitKey("Natural/9", "orig"))
