"""Generic pairwise files: formats, field names, label spellings, defaults, checksums, subsets."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from judgebench.data import Dataset, load_dataset, parse_label
from judgebench.errors import ConfigError, InputError


def row(id_: str, subset: str, instruction: str, out1: str, out2: str, label: int) -> dict[str, Any]:
    return {"id": id_, "subset": subset, "instruction": instruction, "output_1": out1, "output_2": out2,
            "label": label}  # fmt: skip


ROWS: list[dict[str, Any]] = [
    row("n1", "Natural", "Name a prime.", "7", "8", 1),
    row("a1", "Adversarial/Neighbor", "Say hi.", "bye", "hi", 2),
    row("a2", "Adversarial/Manual", "Add 2+2.", "4", "5", 1),
    row("x1", "AdversarialExtra", "Spell cat.", "dog", "cat", 2),
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, Any]], delimiter: str = ",", bom: bool = False) -> Path:
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_jsonl_keeps_ids_subsets_labels_in_order(tmp_path: Path) -> None:
    ds = load_dataset(str(write_jsonl(tmp_path / "set.jsonl", ROWS)))
    assert [i.id for i in ds.items] == [r["id"] for r in ROWS]
    assert [i.subset for i in ds.items] == [r["subset"] for r in ROWS]
    assert [i.label for i in ds.items] == [r["label"] for r in ROWS]
    assert ds.describe() == {
        "items": 4,
        "subsets": {"Natural": 1, "Adversarial/Neighbor": 1, "Adversarial/Manual": 1, "AdversarialExtra": 1},
        "labels": {"1": 2, "2": 2},
    }


@pytest.mark.parametrize("fmt", ["json", "csv", "tsv", "csv-bom"])
def test_every_format_gives_the_same_items_and_checksum(tmp_path: Path, fmt: str) -> None:
    reference = load_dataset(str(write_jsonl(tmp_path / "set.jsonl", ROWS)))
    if fmt == "json":
        path = tmp_path / "set.json"
        path.write_text(json.dumps(ROWS, indent=2), encoding="utf-8")
    else:
        path = write_csv(
            tmp_path / f"set.{fmt[:3]}", ROWS, "\t" if fmt == "tsv" else ",", bom=fmt == "csv-bom"
        )
    ds = load_dataset(str(path))
    assert ds.items == reference.items
    assert ds.checksum == reference.checksum


def test_checksum_is_stable_and_sensitive(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "set.jsonl", ROWS)
    first, second = load_dataset(str(path)), load_dataset(str(path))
    assert first.checksum == second.checksum and len(first.checksum) == 64
    changed = [dict(r) for r in ROWS]
    changed[2]["output_2"] = "5 "
    assert load_dataset(str(write_jsonl(tmp_path / "b.jsonl", changed))).checksum != first.checksum
    reordered = [ROWS[1], ROWS[0], *ROWS[2:]]
    assert load_dataset(str(write_jsonl(tmp_path / "c.jsonl", reordered))).checksum != first.checksum


def test_aliases_and_arena_labels(tmp_path: Path) -> None:
    rows = [
        {"prompt": "Name a prime.", "response_a": "7", "response_b": "8", "winner": "model_a"},
        {"question": "Say hi.", "answer_a": "bye", "answer_b": "hi", "winner": "B>>A"},
    ]
    path = tmp_path / "arena.csv"
    write_csv(path, [rows[0]])
    first = load_dataset(str(path)).items[0]
    assert (first.instruction, first.output_1, first.output_2, first.label) == ("Name a prime.", "7", "8", 1)
    second = load_dataset(str(write_jsonl(tmp_path / "qa.jsonl", [rows[1]]))).items[0]
    assert (second.instruction, second.output_1, second.output_2, second.label) == ("Say hi.", "bye", "hi", 2)


def test_defaults_for_missing_id_and_subset_and_extra_columns_kept(tmp_path: Path) -> None:
    rows = [
        {"input": "Name a prime.", "output_a": "7", "output_b": "8", "preference": "A", "model": "m1"},
        {"input": "Say hi.", "output_a": "bye", "output_b": "hi", "preference": "B", "model": "m2"},
    ]
    ds = load_dataset(str(write_jsonl(tmp_path / "pairs.jsonl", rows)))
    assert [i.id for i in ds.items] == ["pairs/0", "pairs/1"]
    assert {i.subset for i in ds.items} == {"default"}
    assert [i.metadata for i in ds.items] == [{"model": "m1"}, {"model": "m2"}]
    assert [i.label for i in ds.items] == [1, 2]


def test_explicit_mapping_overrides_aliases(tmp_path: Path) -> None:
    rows = [{"prompt": "ignored", "q": "Name a prime.", "left": "7", "right": "8", "gold": "2", "key": 17}]
    path = write_jsonl(tmp_path / "odd.jsonl", rows)
    mapping = {"instruction": "q", "output_1": "left", "output_2": "right", "label": "gold", "id": "key"}
    item = load_dataset(str(path), mapping=mapping).items[0]
    assert (item.id, item.instruction, item.output_1, item.output_2, item.label) == (
        "17",
        "Name a prime.",
        "7",
        "8",
        2,
    )
    assert item.metadata == {"prompt": "ignored"}


def test_mapping_errors(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "set.jsonl", ROWS)
    with pytest.raises(ConfigError, match="'question' is not a dataset field"):
        load_dataset(str(path), mapping={"question": "instruction"})
    with pytest.raises(ConfigError, match="output_1 and output_2 both read column 'x'"):
        load_dataset(str(path), mapping={"output_1": "x", "output_2": "x"})
    with pytest.raises(InputError) as info:
        load_dataset(str(path), mapping={"label": "verdict"})
    assert info.value.field == "label" and "'verdict' is in no record" in info.value.reason
    with pytest.raises(InputError) as info:
        load_dataset(str(path), mapping={"instruction": "prompt"})
    assert (info.value.line, info.value.field) == (1, "instruction")
    assert "looked for: prompt" in info.value.reason


def test_unlabelled_set(tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if k != "label"} for r in ROWS]
    ds = load_dataset(str(write_jsonl(tmp_path / "u.jsonl", rows)))
    assert all(i.label is None for i in ds.items)
    assert ds.describe()["labels"] == {"1": 0, "2": 0, "none": 4}


def test_unlabelled_csv_with_empty_label_column(tmp_path: Path) -> None:
    rows = [{**r, "label": ""} for r in ROWS]
    ds = load_dataset(str(write_csv(tmp_path / "u.csv", rows)))
    assert [i.label for i in ds.items] == [None] * 4


def test_json_concatenated_objects_and_multiline_csv(tmp_path: Path) -> None:
    path = tmp_path / "objs.json"
    path.write_text("\n".join(json.dumps(r, indent=1) for r in ROWS[:2]), encoding="utf-8")
    assert [i.id for i in load_dataset(str(path)).items] == ["n1", "a1"]
    rows = [{**ROWS[0], "output_1": "line one\nline two, with comma"}, ROWS[1]]
    ds = load_dataset(str(write_csv(tmp_path / "m.csv", rows)))
    assert ds.items[0].output_1 == "line one\nline two, with comma"


def test_csv_line_numbers_count_multiline_cells(tmp_path: Path) -> None:
    rows = [{**ROWS[0], "output_1": "a\nb\nc"}, {**ROWS[1], "label": "3"}]
    path = write_csv(tmp_path / "m.csv", rows)
    with pytest.raises(InputError) as info:
        load_dataset(str(path))
    physical = path.read_text(encoding="utf-8").splitlines()
    assert physical[info.value.line - 1].startswith("a1,")  # type: ignore[operator]


def test_json_array_line_numbers(tmp_path: Path) -> None:
    rows = [*ROWS[:3], {**ROWS[3], "label": 7}]
    path = tmp_path / "arr.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_dataset(str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert info.value.item == "x1"
    assert lines[info.value.line - 1].strip() == "{"  # type: ignore[operator]
    assert '"id": "x1"' in lines[info.value.line]  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "label"),
    [(1, 1), (2, 2), (1.0, 1), ("1", 1), (" 2 ", 2), ("A", 1), ("b", 2), ("model_a", 1), ("Model_B", 2),
     ("A>B", 1), ("A>>B", 1), ("B > A", 2), ("B>>A", 2), ("output_2", 2), ("2.0", 2)],
)  # fmt: skip
def test_label_spellings(value: Any, label: int) -> None:
    assert parse_label(value) == label


@pytest.mark.parametrize(
    ("value", "reason"),
    [(0, "tie"), (3, "outside"), (-1, "outside"), (1.5, "outside"), (True, "boolean"), ("A=B", "tie"),
     ("tie", "tie"), ("tie (bothbad)", "tie"), ("C", "not a winner"), ("A<B?", "not a winner"),
     (None, "null"), ([1], "a list"), (float("nan"), "not 1 or 2")],
)  # fmt: skip
def test_labels_refused(value: Any, reason: str) -> None:
    with pytest.raises(ValueError, match=reason.replace("(", r"\(")):
        parse_label(value)


def test_subset_filter_matches_by_path_prefix(tmp_path: Path) -> None:
    path = str(write_jsonl(tmp_path / "set.jsonl", ROWS))
    adv = load_dataset(path, subset="Adversarial")
    assert [i.id for i in adv.items] == ["a1", "a2"]  # not AdversarialExtra
    assert adv.subset == "Adversarial"
    assert load_dataset(path, subset="adversarial/manual").describe()["items"] == 1
    assert adv.checksum != load_dataset(path).checksum
    with pytest.raises(InputError, match="no items in subset 'Advers'; subsets: Natural"):
        load_dataset(path, subset="Advers")


def test_dataset_helpers(tmp_path: Path) -> None:
    ds = load_dataset(str(write_jsonl(tmp_path / "set.jsonl", ROWS)))
    assert isinstance(ds, Dataset) and len(ds) == 4 and [i.id for i in ds] == ["n1", "a1", "a2", "x1"]
    assert ds.by_id()["a2"].output_2 == "5"
    entry = ds.manifest_entry()
    assert entry.checksum == ds.checksum and entry.items == 4 and entry.spec == ds.spec
    assert entry.files == {ds.spec: hashlib.sha256(Path(ds.source).read_bytes()).hexdigest()}
