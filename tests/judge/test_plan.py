"""The call plan: 8 calls per labelled item and judge, swap and tie-probe mappings."""

from __future__ import annotations

from judgebench.conditions import load_conditions
from judgebench.judge.call_plan import plan_calls
from judgebench.records import Item, Variant

ITEM = Item(
    id="Natural/0", subset="Natural", instruction="Say hi", output_1="hi", output_2="hello there", label=2
)
VARIANTS = {
    ("Natural/0", c): Variant(
        item_id="Natural/0", condition=c, instruction=f"说 hi {c}", output_1=f"{c}-1", output_2=f"{c}-2"
    )
    for c in ("zh", "ls")
}
CONDS = load_conditions()


def test_eight_calls_per_item_and_judge() -> None:
    calls, notes = plan_calls([ITEM], VARIANTS, [CONDS["zh"], CONDS["ls"]], ["j1", "j2"])
    assert notes == []
    assert len(calls) == 16
    keys = {c.key for c in calls}
    assert len(keys) == 16
    j1 = sorted((c.kind, c.condition, c.order) for c in calls if c.judge == "j1")
    assert j1 == sorted(
        [("pair", cond, order) for cond in ("en", "zh", "ls") for order in ("orig", "swap")]
        + [("tie_probe", "zh", "en_zh"), ("tie_probe", "zh", "zh_en")]
    )


def test_swap_shows_output_2_first_and_maps_back() -> None:
    calls, _ = plan_calls([ITEM], VARIANTS, [CONDS["zh"]], ["j"], tie_probes=False)
    orig = next(c for c in calls if c.condition == "zh" and c.order == "orig")
    swap = next(c for c in calls if c.condition == "zh" and c.order == "swap")
    assert (orig.output_a, orig.output_b) == ("zh-1", "zh-2")
    assert (swap.output_a, swap.output_b) == ("zh-2", "zh-1")
    assert [orig.verdict_for(w) for w in ("A", "B", "Tie", "invalid")] == ["1", "2", "tie", "invalid"]
    assert [swap.verdict_for(w) for w in ("A", "B", "Tie", "invalid")] == ["2", "1", "tie", "invalid"]
    # the simulated judge learns where the gold output is shown
    assert orig.context()["gold"] == "B" and swap.context()["gold"] == "A"


def test_tie_probe_shows_gold_output_in_both_languages_under_target_instruction() -> None:
    calls, _ = plan_calls([ITEM], VARIANTS, [CONDS["zh"]], ["j"])
    en_zh = next(c for c in calls if c.order == "en_zh")
    zh_en = next(c for c in calls if c.order == "zh_en")
    assert en_zh.instruction == zh_en.instruction == "说 hi zh"
    assert (en_zh.output_a, en_zh.output_b) == ("hello there", "zh-2")  # label 2: gold is output_2
    assert (zh_en.output_a, zh_en.output_b) == ("zh-2", "hello there")
    assert [en_zh.verdict_for(w) for w in ("A", "B", "Tie")] == ["en", "zh", "tie"]
    assert [zh_en.verdict_for(w) for w in ("A", "B", "Tie")] == ["zh", "en", "tie"]


def test_missing_variant_is_reported_not_invented() -> None:
    calls, notes = plan_calls([ITEM], {}, [CONDS["zh"]], ["j"])
    assert {c.condition for c in calls} == {"en"}
    assert notes and "no 'zh' variant" in notes[0]


def test_unlabelled_items_get_no_tie_probes() -> None:
    item = ITEM.model_copy(update={"label": None})
    calls, _ = plan_calls([item], VARIANTS, [CONDS["zh"]], ["j"])
    assert all(c.kind == "pair" for c in calls)
