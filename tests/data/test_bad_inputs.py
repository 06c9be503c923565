"""Every kind of bad input gets an error naming the file, the line or item, the field and the problem.

The corpus lives in tests/data/bad/ (one small file per case); the 10 MB cases are generated here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench.data import MAX_FIELD_BYTES, load_dataset
from judgebench.errors import InputError
from tests.data.conftest import BAD

# file, line, item, field, fragments of the reason (all must appear)
CASES: list[tuple[str, int | None, str | None, str | None, tuple[str, ...]]] = [
    ("not_json.jsonl", 2, None, None, ("not valid JSON",)),
    ("not_object.jsonl", 2, "not_object/1", None, ("expected a JSON object", "a list")),
    ("missing_field.jsonl", 2, "q2", "output_2", ("missing field 'output_2'", "response_b", "--field")),
    ("label_outside.jsonl", 3, "q3", "label", ("label 3 is outside {1, 2}",)),
    ("label_tie.csv", 3, "q2", "label", ("'A=B' is a tie", "gold winner")),
    ("label_unknown.jsonl", 2, "q2", "label", ("'maybe' is not a winner", "A>B")),
    ("label_boolean.jsonl", 1, "q1", "label", ("label true is a boolean",)),
    ("empty_output.jsonl", 2, "q2", "output_1", ("'output_1' is empty", "whitespace only")),
    ("empty_instruction.json", 9, "a2", "instruction", ("'instruction' is empty",)),
    ("duplicate_ids.jsonl", 3, "dup", "id", ("duplicate id 'dup'", "first at line 1", "again at line 3")),
    ("not_utf8.jsonl", 2, None, None, ("not UTF-8", "byte 0xe9", "save the file as UTF-8")),
    ("empty.jsonl", None, None, None, ("the file is empty",)),
    ("whitespace_only.json", None, None, None, ("the file is empty", "whitespace only")),
    ("empty_array.json", None, None, None, ("holds no items",)),
    ("csv_missing_columns.csv", 1, None, "output_2", ("lacks column", "'output_2'", "has: id, prompt")),
    ("csv_ragged_row.csv", 3, None, None, ("the row has 6 fields, the header has 5",)),
    ("wrong_type.jsonl", 2, "q2", "output_2", ("'output_2' must be a string, got a number",)),
    ("json_array_syntax.json", 3, None, None, ("expected ',' or ']'",)),
    ("json_array_not_object.json", 3, "json_array_not_object/1", None, ("JSON object", "a string")),
    ("mixed_labels.jsonl", 2, "q2", "label", ("missing label", "other items")),
    ("ambiguous_alias.jsonl", 1, None, "instruction", ("'prompt' and 'question'", "--field instruction=")),
    ("unknown_type.txt", None, None, None, ("unknown file type '.txt'", ".jsonl")),
]


@pytest.mark.parametrize(("name", "line", "item", "field", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_bad_file_message(
    name: str, line: int | None, item: str | None, field: str | None, fragments: tuple[str, ...]
) -> None:
    path = BAD / name
    assert path.exists(), f"corpus file {name} is missing"
    with pytest.raises(InputError) as info:
        load_dataset(str(path))
    exc = info.value
    message = str(exc)
    assert exc.path == str(path)
    assert message.startswith(str(path))  # the one-line CLI reason names the file first
    assert exc.line == line
    if line is not None:
        assert f"line {line}" in message
    assert exc.item == item
    if item is not None:
        assert f"item {item}" in message
    assert exc.field == field
    if field is not None:
        assert f"field '{field}'" in message
    for fragment in fragments:
        assert fragment in exc.reason, (fragment, exc.reason)


def test_not_utf8_offset_points_at_the_bad_byte() -> None:
    raw = (BAD / "not_utf8.jsonl").read_bytes()
    offset = raw.index(b"\xe9")
    column = offset - raw.rindex(b"\n", 0, offset)
    with pytest.raises(InputError) as info:
        load_dataset(str(BAD / "not_utf8.jsonl"))
    assert f"byte offset {offset} (column {column})" in info.value.reason


def test_corpus_has_a_test_for_every_file() -> None:
    tested = {case[0] for case in CASES}
    assert {p.name for p in BAD.iterdir()} == tested


def _ten_mb() -> str:
    return "x" * (10 * 1024 * 1024)


def test_ten_megabyte_field_in_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    rows = [
        {"id": "small", "instruction": "Say hi.", "output_1": "hi", "output_2": "bye", "label": 1},
        {"id": "big", "instruction": "Say hi.", "output_1": "hi", "output_2": _ten_mb(), "label": 1},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_dataset(str(path))
    exc = info.value
    assert (exc.path, exc.line, exc.item, exc.field) == (str(path), 2, "big", "output_2")
    assert f"over the limit of {MAX_FIELD_BYTES:,} bytes" in exc.reason
    assert "10,485,760 bytes" in exc.reason


def test_ten_megabyte_field_in_csv(tmp_path: Path) -> None:
    """The csv module's own 128 KiB cap must not pre-empt the precise message."""
    path = tmp_path / "huge.csv"
    path.write_text(f"id,instruction,output_1,output_2,label\nbig,{_ten_mb()},a,b,1\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_dataset(str(path))
    exc = info.value
    assert (exc.line, exc.item, exc.field) == (2, "big", "instruction")
    assert "over the limit" in exc.reason


def test_field_just_under_the_limit_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    text = "y" * MAX_FIELD_BYTES
    row = {"instruction": "Echo.", "output_1": text, "output_2": "n", "label": 1}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert load_dataset(str(path)).items[0].output_1 == text


def test_missing_path_names_the_spec_forms(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_dataset(str(tmp_path / "nope.jsonl"))
    assert info.value.path == str(tmp_path / "nope.jsonl")
    assert "no such file" in info.value.reason and "llmbar" in info.value.reason


def test_folder_is_not_a_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "set.jsonl"
    folder.mkdir()
    with pytest.raises(InputError, match="is a folder"):
        load_dataset(str(folder))
