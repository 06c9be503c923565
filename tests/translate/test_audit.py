"""The translation audit: every rule fires on a hand-made bad variant and stays quiet on a good one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench.errors import ConfigError, InputError
from judgebench.records import AuditFlag, Item, Variant
from judgebench.translate.audit import (
    DEFAULT_RULES,
    RULES,
    AuditRules,
    audit_all,
    audit_variant,
    code_blocks,
    flagged_item_ids,
    prose,
    summarize,
)

DATA = Path(__file__).resolve().parents[2] / "data"
ZH = DEFAULT_RULES["zh"]
LS = DEFAULT_RULES["ls"]

CODE = "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"
ITEM = Item(
    id="Natural/0",
    subset="Natural",
    instruction="Compute the average of 4, 8 and 15, and explain the steps in two sentences.",
    output_1="Add them: 4 + 8 + 15 = 27. Then divide by 3 to get 9.",
    output_2=f"Here is a helper that computes it:\n\n{CODE}\n\nThe result is 9.",
    label=1,
)
GOOD_ZH = Variant(
    item_id="Natural/0",
    condition="zh",
    instruction="计算 4、8 和 15 的平均值，并用两句话解释步骤。",
    output_1="先把它们相加：4 + 8 + 15 = 27。再除以 3，得到 9。",
    output_2=f"下面是一个计算它的辅助函数：\n\n{CODE}\n\n结果是 9。",
)
GOOD_LS = Variant(
    item_id="Natural/0",
    condition="ls",
    instruction="计算 4、8 和 15 的 average，并用两句话解释 steps。",
    output_1="先把它们加起来：4 + 8 + 15 = 27。再除以 3，得到 9。Done。",
    output_2=f"下面是一个计算它的 helper function：\n\n{CODE}\n\n结果是 9。",
)


def _with(variant: Variant, **changes: str) -> Variant:
    return variant.model_copy(update=changes)


def _rules_of(flags: list[AuditFlag]) -> set[tuple[str, str]]:
    return {(f.field, f.rule) for f in flags}


def test_good_variants_raise_no_flag() -> None:
    assert audit_variant(ITEM, GOOD_ZH, ZH) == []
    assert audit_variant(ITEM, GOOD_LS, LS) == []


@pytest.mark.parametrize(
    ("variant", "rules", "field", "rule", "detail"),
    [
        (_with(GOOD_ZH, output_1="   "), ZH, "output_1", "empty", "empty"),
        (
            _with(GOOD_ZH, output_1="先把它们相加，再除以项数，就能得到平均数。"),
            ZH,
            "output_1",
            "numbers_missing",
            "source has 6 numbers, variant 0",
        ),
        (
            _with(GOOD_ZH, output_1="先把它们相加：4 + 8 + 15。再除以数量。"),
            ZH,
            "output_1",
            "numbers_count",
            "source has 6 numbers, variant 3",
        ),
        (_with(GOOD_ZH, instruction="求平均。"), ZH, "instruction", "length_ratio", "below 0.10"),
        (_with(GOOD_LS, instruction="计算 average。"), LS, "instruction", "length_ratio", "below 0.35"),
        (
            _with(GOOD_ZH, output_1="Add them up: 4 + 8 + 15 = 27, then divide by 3 to get 9 (平均)."),
            ZH,
            "output_1",
            "script",
            "Han letters are",
        ),
        (
            _with(GOOD_LS, output_1="先把它们相加：4 + 8 + 15 = 27。再除以 3，得到 9。"),
            LS,
            "output_1",
            "script",
            "no Latin letters",
        ),
        (
            _with(GOOD_LS, output_1="Add them first: 4 + 8 + 15 = 27. Divide by 3 and you get 9."),
            LS,
            "output_1",
            "script",
            "no Han letters",
        ),
        (_with(GOOD_ZH, output_1=ITEM.output_1), ZH, "output_1", "identical", "identical"),
        (
            _with(GOOD_ZH, output_2="下面是一个计算它的辅助函数：sum(xs) / len(xs)。结果是 9。"),
            ZH,
            "output_2",
            "code_block",
            "source has 1 fenced code blocks, variant 0",
        ),
        (
            _with(GOOD_ZH, output_2="下面是一个辅助函数：\n\n```python\n# 计算平均值\n```\n\n结果是 9。"),
            ZH,
            "output_2",
            "code_block",
            "code block 1 changed",
        ),
    ],
)
def test_each_rule_fires_with_a_concrete_detail(
    variant: Variant, rules: AuditRules, field: str, rule: str, detail: str
) -> None:
    flags = audit_variant(ITEM, variant, rules)
    hits = [f for f in flags if (f.field, f.rule) == (field, rule)]
    assert len(hits) == 1, flags
    assert detail in hits[0].detail
    assert hits[0].item_id == ITEM.id and hits[0].condition == variant.condition
    # the other fields of the good variant stay quiet
    assert {f.field for f in flags} == {field}


def test_every_interface_rule_is_covered() -> None:
    assert set(RULES) == {
        "empty",
        "numbers_missing",
        "numbers_count",
        "length_ratio",
        "script",
        "identical",
        "code_block",
    }


def test_empty_field_reports_only_empty() -> None:
    flags = audit_variant(ITEM, _with(GOOD_ZH, output_2=""), ZH)
    assert _rules_of(flags) == {("output_2", "empty")}


def test_numbers_count_threshold_is_inclusive_and_configurable() -> None:
    two_fewer = _with(GOOD_ZH, output_1="先把它们相加：4 + 8 + 15 = 27。再除以项数。")
    assert audit_variant(ITEM, two_fewer, ZH) == []
    strict = AuditRules(numbers_count_max_diff=2)
    assert _rules_of(audit_variant(ITEM, two_fewer, strict)) == {("output_1", "numbers_count")}


def test_numbers_missing_needs_two_source_numbers() -> None:
    item = ITEM.model_copy(update={"output_1": "The answer is 9, as the sum divided by the count shows."})
    variant = _with(GOOD_ZH, output_1="答案是九，用总和除以个数就能看出来。")
    assert audit_variant(item, variant, ZH) == []


def test_letterless_and_code_only_fields_skip_script_and_identical() -> None:
    item = ITEM.model_copy(update={"output_1": "9", "output_2": CODE})
    for rules, variant in ((ZH, GOOD_ZH), (LS, GOOD_LS)):
        same = _with(variant, output_1="9", output_2=CODE)
        assert audit_variant(item, same, rules) == []


def test_code_is_ignored_by_the_script_check() -> None:
    long_code = (
        "```python\n" + "\n".join(f"value_{i} = compute_something_long({i})" for i in range(8)) + "\n```"
    )
    item = ITEM.model_copy(update={"output_2": f"Use this:\n\n{long_code}"})
    variant = _with(GOOD_ZH, output_2=f"用这段代码：\n\n{long_code}")
    assert audit_variant(item, variant, ZH) == []


def test_translated_comment_in_code_is_tolerated() -> None:
    item = ITEM.model_copy(
        update={"output_2": "```python\n# average\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"}
    )
    variant = _with(GOOD_ZH, output_2="```python\n# 平均值\ndef mean(xs):\n    return sum(xs) / len(xs)\n```")
    assert audit_variant(item, variant, ZH) == []


def test_very_short_variant_prose_skips_script_check() -> None:
    item = ITEM.model_copy(update={"output_1": "Yes."})
    assert audit_variant(item, _with(GOOD_LS, output_1="是。"), LS) == []


@pytest.mark.parametrize(
    ("script", "text", "flagged"),
    [
        ("Japanese", "4 と 8 と 15 の平均を計算し、手順を二文で説明してください。", False),
        ("Japanese", "Compute the average of 4, 8 and 15 and explain the steps.", True),
        ("Hangul", "4, 8, 15의 평균을 계산하고 두 문장으로 단계를 설명하세요.", False),
        ("Hangul", "计算 4、8 和 15 的平均值，并用两句话解释步骤。", True),
        ("Cyrillic", "Вычислите среднее чисел 4, 8 и 15 и объясните шаги двумя предложениями.", False),
        (
            "Latin",
            "Berechne den Durchschnitt von 4, 8 und 15 und erkläre die Schritte in zwei Sätzen.",
            False,
        ),
        ("Latin", "计算 4、8 和 15 的平均值，并用两句话解释步骤。", True),
    ],
)
def test_other_target_scripts(script: str, text: str, flagged: bool) -> None:
    rules = AuditRules(script=script, min_length_ratio=0.1)
    flags = audit_variant(ITEM, _with(GOOD_ZH, condition="xx", instruction=text), rules)
    assert (("instruction", "script") in _rules_of(flags)) is flagged


def test_language_switch_with_japanese() -> None:
    rules = AuditRules(kind="language_switch", script="Japanese", min_length_ratio=0.35)
    ok = _with(GOOD_LS, instruction="4、8、15 の average を計算して、steps を二文で説明してください。")
    assert audit_variant(ITEM, ok, rules) == []
    bad = _with(GOOD_LS, instruction="4、8、15 の平均を計算して、手順を二文で説明してください。")
    assert _rules_of(audit_variant(ITEM, bad, rules)) == {("instruction", "script")}


def test_code_block_helpers() -> None:
    text = "a\n```js\nx = 1\n```\nb\n~~~\ny\n~~~\n```\nunclosed"
    assert code_blocks(text) == ["x = 1", "y", "unclosed"]
    assert "x = 1" not in prose(text) and "a" in prose(text)
    assert "inline" not in prose("use `inline()` here")
    # an info string never closes a block; a longer closing fence does
    assert code_blocks("```md\n```python\ninner\n````\n") == ["```python\ninner"]


def test_audit_all_and_summary() -> None:
    items = {ITEM.id: ITEM, "Natural/1": ITEM.model_copy(update={"id": "Natural/1"})}
    variants = [
        GOOD_ZH,
        GOOD_LS,
        _with(GOOD_ZH, item_id="Natural/1", output_1=""),
        _with(GOOD_LS, item_id="Natural/1", output_1="先把它们相加，再除以项数。"),
    ]
    flags = audit_all(items, variants, DEFAULT_RULES)
    assert flagged_item_ids(flags) == {"Natural/1"}
    summary = summarize(flags, n_items=len(items))
    assert summary["flags"] == len(flags) == 4
    assert summary["by_condition_rule"] == {
        "zh": {"empty": 1},
        "ls": {"length_ratio": 1, "numbers_missing": 1, "script": 1},
    }
    assert summary["by_rule"] == {"empty": 1, "length_ratio": 1, "numbers_missing": 1, "script": 1}
    assert summary["flagged_items_by_condition"] == {"ls": 1, "zh": 1}
    assert summary["flagged_items"] == 1 and summary["flagged_share"] == 0.5
    assert summarize([], n_items=0)["flagged_share"] is None


def test_audit_all_refuses_unknown_items_and_conditions() -> None:
    with pytest.raises(InputError, match="Natural/9"):
        audit_all({ITEM.id: ITEM}, [_with(GOOD_ZH, item_id="Natural/9")], DEFAULT_RULES)
    with pytest.raises(ConfigError, match="'ja'"):
        audit_all({ITEM.id: ITEM}, [_with(GOOD_ZH, condition="ja")], DEFAULT_RULES)


def test_rules_refuse_what_cannot_work() -> None:
    """(A conditions.toml audit table is read by config's loader: a typo there is named with the file,
    line and key, tests/config.)"""
    with pytest.raises(ConfigError, match="unknown script 'Klingon'"):
        AuditRules(script="Klingon")
    with pytest.raises(ConfigError, match="between 0 and 1"):
        AuditRules(min_target_script_share=1.5)
    with pytest.raises(ConfigError, match="kind"):
        AuditRules(kind="mixed")  # type: ignore[arg-type]


def test_bundled_sample_variants_raise_no_flag() -> None:
    items = {}
    for line in (DATA / "sample.jsonl").read_text(encoding="utf-8").splitlines():
        item = Item.model_validate_json(line)
        items[item.id] = item
    variants = [
        Variant.model_validate(json.loads(line))
        for line in (DATA / "sample_variants.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(variants) == 2 * len(items)
    assert audit_all(items, variants, DEFAULT_RULES) == []
