"""Human-label files: JSONL and CSV read alike; every bad row is an error naming the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench.errors import InputError
from judgebench.human import load_human_labels

KNOWN = {(f"i{k}", c) for k in range(4) for c in ("en", "zh")}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_jsonl_and_csv_read_the_same_labels(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"item_id": "i0", "condition": "en", "label": 1, "annotator": "ann"},
        {"item_id": "i0", "condition": "en", "label": "tie", "annotator": "bob"},
        {"item_id": "i1", "condition": "zh", "label": "2"},
    ]
    from_jsonl = load_human_labels(_jsonl(tmp_path / "h.jsonl", rows), KNOWN)
    csv = tmp_path / "h.csv"
    csv.write_text(
        "item_id,condition,label,annotator\ni0,en,1,ann\n\ni0,en,TIE,bob\ni1,zh,2,\n", encoding="utf-8"
    )
    from_csv = load_human_labels(csv, KNOWN)
    assert [(x.item_id, x.condition, x.label, x.annotator) for x in from_jsonl.labels] == [
        ("i0", "en", "1", "ann"),
        ("i0", "en", "tie", "bob"),
        ("i1", "zh", "2", ""),
    ]
    assert [(x.item_id, x.condition, x.label, x.annotator) for x in from_csv.labels] == [
        (x.item_id, x.condition, x.label, x.annotator) for x in from_jsonl.labels
    ]
    assert [x.line for x in from_csv.labels] == [2, 4, 5]  # the blank line is skipped, lines still count
    assert from_jsonl.annotators == ["", "ann", "bob"]


@pytest.mark.parametrize(
    ("row", "line", "says"),
    [
        ({"item_id": "nope", "condition": "en", "label": 1}, 2, "unknown item id 'nope'"),
        ({"item_id": "i1", "condition": "ja", "label": 1}, 2, "not judged in condition 'ja'"),
        ({"item_id": "i1", "condition": "en", "label": "A"}, 2, "label 'A' is not in the label set"),
        ({"item_id": "i1", "condition": "en", "label": 3}, 2, "label 3 is not in the label set"),
        ({"item_id": "i1", "condition": "en", "label": True}, 2, "label True is not in the label set"),
        ({"item_id": "i1", "condition": "en"}, 2, "'label' is missing"),
        ({"item_id": "", "condition": "en", "label": 1}, 2, "'item_id' is missing or empty"),
        ({"item_id": "i1", "condition": "en", "label": 1, "anotator": "x"}, 2, "unknown field(s) anotator"),
        (
            {"item_id": "i0", "condition": "en", "label": 2, "annotator": "ann"},
            2,
            "already labelled on line 1",
        ),
    ],
)
def test_a_bad_row_names_the_file_and_line(
    tmp_path: Path, row: dict[str, object], line: int, says: str
) -> None:
    first = {"item_id": "i0", "condition": "en", "label": 1, "annotator": "ann"}
    path = _jsonl(tmp_path / "h.jsonl", [first, row])
    with pytest.raises(InputError) as err:
        load_human_labels(path, KNOWN)
    assert err.value.path == str(path)
    assert err.value.line == line
    assert says in str(err.value)
    assert str(err.value).startswith(f"{path}, line {line}")


def test_the_same_item_twice_without_annotator_is_a_duplicate(tmp_path: Path) -> None:
    csv = tmp_path / "h.csv"
    csv.write_text("item_id,condition,label\ni0,en,1\ni1,en,1\ni0,en,2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 4: duplicate row: item 'i0', condition 'en', no annotator"):
        load_human_labels(csv, KNOWN)
    # the same item in another condition, or by another annotator, is not a duplicate
    csv.write_text("item_id,condition,label,annotator\ni0,en,1,a\ni0,zh,1,a\ni0,en,2,b\n", encoding="utf-8")
    assert len(load_human_labels(csv, KNOWN).labels) == 3


@pytest.mark.parametrize(
    ("name", "text", "line", "says"),
    [
        ("h.csv", "item_id,label\ni0,1\n", 1, "the header lacks column(s) condition"),
        ("h.csv", "item_id,condition,label\ni0,en\n", 2, "the row has 2 fields, the header has 3"),
        ("h.jsonl", '{"item_id": "i0"\n', 1, "not valid JSON"),
        ("h.jsonl", "[1, 2]\n", 1, "expected a JSON object"),
        ("h.jsonl", "\n\n", None, "the file is empty"),
        ("h.txt", "x", None, "unknown file type '.txt'"),
    ],
)
def test_a_broken_file_is_refused_with_where(
    tmp_path: Path, name: str, text: str, line: int | None, says: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_human_labels(path, KNOWN)
    assert (err.value.path, err.value.line) == (str(path), line)
    assert says in str(err.value)


def test_majority_label_and_split_votes(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"item_id": "i0", "condition": "en", "label": 1, "annotator": "a"},
        {"item_id": "i0", "condition": "en", "label": 1, "annotator": "b"},
        {"item_id": "i0", "condition": "en", "label": 2, "annotator": "c"},
        {"item_id": "i1", "condition": "en", "label": 1, "annotator": "a"},
        {"item_id": "i1", "condition": "en", "label": "tie", "annotator": "b"},
        {"item_id": "i2", "condition": "zh", "label": 2, "annotator": "a"},
    ]
    labels = load_human_labels(_jsonl(tmp_path / "h.jsonl", rows), KNOWN)
    assert labels.majority() == {("i0", "en"): "1", ("i2", "zh"): "2"}
    assert labels.split_votes() == 1  # i1: one vote each, no reference label
