"""The bundled sample and its zh/ls variants: the offline run's default data must be well formed.

These properties mirror the translation audit (PROTOCOL §2) but are computed independently here, so a
bug in the audit cannot hide a bad bundled file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from judgebench.records import TEXT_FIELDS, Item, Variant

DATA = Path(__file__).resolve().parents[1] / "data"
CATEGORIES = {
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
}
NUMBER = re.compile(r"\d+(?:\.\d+)?")
FENCED = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
INLINE = re.compile(r"`[^`\n]+`")


def _is_cjk(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf"


def _is_latin(char: str) -> bool:
    return char.isascii() and char.isalpha()


def _prose(text: str) -> str:
    """Text outside code (fenced blocks and inline spans), which stays verbatim in every condition."""
    return INLINE.sub(" ", FENCED.sub(" ", text))


def _read_lines(path: Path) -> list[dict[str, object]]:
    raw = path.read_bytes().decode("utf-8")
    lines = raw.splitlines()
    assert lines, f"{path} is empty"
    assert all(line.strip() for line in lines), f"{path} has blank lines"
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def items() -> dict[str, Item]:
    rows = _read_lines(DATA / "sample.jsonl")
    for row in rows:
        assert set(row) == {"id", "subset", "instruction", "output_1", "output_2", "label"}, row
    parsed = [Item.model_validate(row) for row in rows]
    ids = [item.id for item in parsed]
    assert len(ids) == len(set(ids)), "duplicate item ids"
    return {item.id: item for item in parsed}


@pytest.fixture(scope="module")
def variants() -> list[Variant]:
    rows = _read_lines(DATA / "sample_variants.jsonl")
    for row in rows:
        assert set(row) == {"item_id", "condition", "instruction", "output_1", "output_2", "source"}, row
    return [Variant.model_validate(row) for row in rows]


def test_items_cover_every_category_with_stable_ids(items: dict[str, Item]) -> None:
    assert len(items) >= 24
    per_subset = Counter(item.subset for item in items.values())
    assert set(per_subset) == CATEGORIES
    assert min(per_subset.values()) >= 4
    for item_id, item in items.items():
        prefix, _, index = item_id.rpartition("/")
        assert prefix == item.subset and index.isdigit(), item_id
    for subset, count in per_subset.items():
        indices = sorted(int(i.rpartition("/")[2]) for i in items if i.rpartition("/")[0] == subset)
        assert indices == list(range(count)), subset


def test_labels_are_gold_and_balanced(items: dict[str, Item]) -> None:
    labels = Counter(item.label for item in items.values())
    assert set(labels) == {1, 2}
    assert abs(labels[1] - labels[2]) <= max(2, len(items) // 10), labels


def test_items_are_short_enough_for_a_small_local_judge(items: dict[str, Item]) -> None:
    for item in items.values():
        assert all(getattr(item, f).strip() for f in TEXT_FIELDS), item.id
        assert item.output_1 != item.output_2, item.id
        assert sum(len(getattr(item, f)) for f in TEXT_FIELDS) <= 1200, item.id


def test_sample_exercises_numbers_and_code(items: dict[str, Item]) -> None:
    texts = [getattr(item, f) for item in items.values() for f in TEXT_FIELDS]
    assert sum(1 for t in texts if "```" in t) >= 3
    assert sum(1 for t in texts if len(NUMBER.findall(t)) >= 2) >= 5


def test_every_item_has_one_zh_and_one_ls_variant(items: dict[str, Item], variants: list[Variant]) -> None:
    keys = Counter((v.item_id, v.condition) for v in variants)
    assert set(keys) == {(item_id, c) for item_id in items for c in ("zh", "ls")}
    assert set(keys.values()) == {1}
    assert {v.source for v in variants} == {"bundled"}


def _pairs(items: dict[str, Item], variants: list[Variant], condition: str) -> list[tuple[str, str, str]]:
    return [
        (f"{v.item_id}/{f}", getattr(items[v.item_id], f), getattr(v, f))
        for v in variants
        if v.condition == condition
        for f in TEXT_FIELDS
    ]


def test_zh_fields_are_mostly_chinese(items: dict[str, Item], variants: list[Variant]) -> None:
    for where, _source, text in _pairs(items, variants, "zh"):
        letters = [c for c in _prose(text) if c.isalpha()]
        assert letters, where
        share = sum(_is_cjk(c) for c in letters) / len(letters)
        assert share > 0.5, f"{where}: only {share:.0%} CJK"


def test_ls_fields_mix_both_scripts(items: dict[str, Item], variants: list[Variant]) -> None:
    for where, _source, text in _pairs(items, variants, "ls"):
        body = _prose(text)
        assert any(_is_cjk(c) for c in body), f"{where}: no Chinese"
        assert any(_is_latin(c) for c in body), f"{where}: no Latin letters"


@pytest.mark.parametrize("condition", ["zh", "ls"])
def test_variants_keep_numbers_code_and_differ_from_source(
    items: dict[str, Item], variants: list[Variant], condition: str
) -> None:
    min_ratio = {"zh": 0.10, "ls": 0.35}[condition]
    for where, source, text in _pairs(items, variants, condition):
        assert text.strip(), where
        assert text.strip() != source.strip(), f"{where}: identical to the source"
        src_numbers, var_numbers = NUMBER.findall(source), NUMBER.findall(text)
        assert abs(len(src_numbers) - len(var_numbers)) < 3, f"{where}: {src_numbers} vs {var_numbers}"
        assert not (len(src_numbers) >= 2 and not var_numbers), where
        assert len(text.strip()) / len(source.strip()) >= min_ratio, where
        # code is kept verbatim, block for block
        assert FENCED.findall(text) == FENCED.findall(source), f"{where}: code blocks changed"
        assert INLINE.findall(text) == INLINE.findall(source), f"{where}: inline code changed"
        assert text.count("\n") >= source.count("\n") - 1, f"{where}: line breaks lost"
