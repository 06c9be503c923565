"""RewardBench and M-RewardBench from local snapshots (fixture parquet files in the hub's layout):
items, seeded order, subsets and categories, id alignment, and bad input that must not pass silently."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judgebench.data import load_dataset
from judgebench.data.rewardbench import chosen_first, hub_dataset, item_id, language_configs
from judgebench.errors import InputError
from tests.data.rewardbench_fixture import (
    FIXTURE_IDS,
    FIXTURE_NOT_IN_JA,
    FIXTURE_NOWHERE,
    SUBSETS,
    english_rows,
    language_file,
    language_rows,
    rewardbench_file,
    texts,
    write_parquet,
    write_snapshot,
)


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_snapshot(tmp_path / "hub")


def test_a_snapshot_with_all_23_languages_loads_every_one(snapshot: Path) -> None:
    ds = load_dataset("m-rewardbench", data_dir=snapshot)
    configs = language_configs()
    n = len(FIXTURE_IDS) - 1  # FIXTURE_NOWHERE is in no language
    assert len(configs) == 23
    assert ds.describe()["languages"] == {c: n - 1 if c == "ja" else n for c in configs}
    assert ds.language_configs == configs and not ds.absent_languages
    for condition, config in configs.items():
        assert str(language_file(snapshot, condition)) in ds.files, config
        assert {v.condition for v in ds.variants[condition]} == {condition}
    assert len(ds.files) == 24


def test_a_snapshot_missing_a_language_fails_naming_it_and_the_revision(snapshot: Path) -> None:
    language_file(snapshot, "de").unlink()
    with pytest.raises(InputError) as info:
        load_dataset("m-rewardbench", data_dir=snapshot)
    message = str(info.value)
    assert "de (deu_Latn)" in message and hub_dataset("m-rewardbench").revision in message
    assert "lacks 1 of the 23 languages" in message
    assert "--dataset m-rewardbench:ar," in message and ",de," not in message  # what the copy holds
    # asking for what the copy holds works, and says what was not loaded
    ds = load_dataset("m-rewardbench:zh,ja", data_dir=snapshot)
    assert set(ds.variants) == {"zh", "ja"} and ds.spec == "m-rewardbench:zh,ja"
    assert "de" in ds.absent_languages
    with pytest.raises(InputError, match="de \\(deu_Latn\\)"):
        load_dataset("m-rewardbench:zh,de", data_dir=snapshot)
    with pytest.raises(InputError, match="no language xx"):
        load_dataset("m-rewardbench:zh,xx", data_dir=snapshot)


def test_m_rewardbench_describe_counts_languages_missing_and_excluded(snapshot: Path) -> None:
    ds = load_dataset("m-rewardbench:zh,ja,de", data_dir=snapshot)
    info = ds.describe()
    n = len(FIXTURE_IDS) - 1  # FIXTURE_NOWHERE is in no language
    assert info["items"] == n
    assert info["languages"] == {"de": n, "ja": n - 1, "zh": n}
    assert info["missing"] == {"de": 0, "ja": 1, "zh": 0}
    assert info["language_configs"] == {"de": "deu_Latn", "ja": "jpn_Jpan", "zh": "zho_Hans"}
    assert info["excluded"] == {"rewardbench items in no language config": 1}
    assert set(info["absent_languages"]) == set(language_configs()) - {"zh", "ja", "de"}
    assert sum(info["labels"].values()) == n
    assert info["categories"] == {"Chat": 6, "Chat Hard": 12, "Safety": 4, "Reasoning": 1}
    assert info["subsets"]["Chat Hard/llmbar-natural"] == 2
    assert item_id(FIXTURE_NOWHERE) not in ds.by_id()
    assert item_id(FIXTURE_NOT_IN_JA) not in {v.item_id for v in ds.variants["ja"]}
    # every file read is recorded with its hash
    assert len(ds.files) == 4 and all(len(sha) == 64 for sha in ds.files.values())


def test_rewardbench_items_have_a_seeded_order_with_gold_in_both_positions(snapshot: Path) -> None:
    ds = load_dataset("rewardbench", data_dir=snapshot)
    assert len(ds) == len(FIXTURE_IDS)
    labels = {item.label for item in ds}
    assert labels == {1, 2}
    rows = {row["id"]: row for row in english_rows()}
    for item in ds:
        rb_id = item.metadata["rewardbench_id"]
        chosen = item.output_1 if item.label == 1 else item.output_2
        rejected = item.output_2 if item.label == 1 else item.output_1
        assert (chosen, rejected) == (rows[rb_id]["chosen"], rows[rb_id]["rejected"])
        assert item.label == (1 if chosen_first(rb_id) else 2)
        assert item.id == f"rewardbench/{rb_id}"
    assert load_dataset("rewardbench", data_dir=snapshot).checksum == ds.checksum


def test_variants_are_aligned_with_the_english_items_by_id(snapshot: Path) -> None:
    ds = load_dataset("m-rewardbench", data_dir=snapshot)
    items = ds.by_id()
    for condition in ("zh", "ja", "de"):
        for variant in ds.variants[condition]:
            item = items[variant.item_id]
            rb_id = item.metadata["rewardbench_id"]
            _, chosen, rejected = (t.format(n=rb_id) for t in texts(condition))
            gold = variant.output_1 if item.label == 1 else variant.output_2
            other = variant.output_2 if item.label == 1 else variant.output_1
            assert (gold, other) == (chosen, rejected)
            assert variant.source == "dataset:m-rewardbench"
            assert variant.condition == condition


@pytest.mark.parametrize(
    ("subset", "count"),
    [("llmbar", 10), ("Chat Hard", 12), ("llmbar-natural", 2), ("Safety", 4), ("chat", 6)],
)
def test_subsets_categories_and_the_llmbar_part(snapshot: Path, subset: str, count: int) -> None:
    ds = load_dataset("m-rewardbench", data_dir=snapshot, subset=subset)
    assert len(ds) == count
    kept = {item.id for item in ds}
    assert all(v.item_id in kept for vs in ds.variants.values() for v in vs)
    if subset == "llmbar":
        assert {item.metadata["rewardbench_subset"] for item in ds} == {s for s in SUBSETS if "llmbar" in s}


def test_an_id_in_a_language_that_rewardbench_lacks_is_an_error(snapshot: Path) -> None:
    rows = language_rows("zh", english_rows())
    rows[2] = {**rows[2], "id": 99999}
    write_parquet(language_file(snapshot, "zh"), rows)
    with pytest.raises(InputError) as info:
        load_dataset("m-rewardbench", data_dir=snapshot)
    message = str(info.value)
    assert "zho_Hans" in message and "row 3" in message and "rewardbench/99999" in message
    assert "not in RewardBench" in message


def test_a_duplicate_id_in_a_language_is_an_error(snapshot: Path) -> None:
    rows = language_rows("de", english_rows())
    rows.append(dict(rows[0]))
    write_parquet(language_file(snapshot, "de"), rows)
    with pytest.raises(InputError, match="duplicate id in deu_Latn"):
        load_dataset("m-rewardbench", data_dir=snapshot)


def test_a_record_whose_models_disagree_with_rewardbench_is_a_misalignment(snapshot: Path) -> None:
    rows = language_rows("ja", english_rows())
    rows[0] = {**rows[0], "rejected_model": "someone-else"}
    write_parquet(language_file(snapshot, "ja"), rows)
    with pytest.raises(InputError, match="do not line up") as info:
        load_dataset("m-rewardbench", data_dir=snapshot)
    assert "field 'rejected_model'" in str(info.value)


@pytest.mark.parametrize("column", ["chosen", "id"])
def test_a_schema_change_names_the_file_and_the_column(snapshot: Path, column: str) -> None:
    frame = pd.DataFrame(language_rows("zh", english_rows())).drop(columns=[column])
    frame.to_parquet(language_file(snapshot, "zh"), index=False)
    with pytest.raises(InputError) as info:
        load_dataset("m-rewardbench", data_dir=snapshot)
    assert str(language_file(snapshot, "zh")) in str(info.value)
    assert f"field '{column}'" in str(info.value)


def test_rewardbench_schema_change_and_bad_ids(snapshot: Path) -> None:
    frame = pd.DataFrame(english_rows()).drop(columns=["subset"])
    frame.to_parquet(rewardbench_file(snapshot), index=False)
    with pytest.raises(InputError, match="field 'subset'"):
        load_dataset("rewardbench", data_dir=snapshot)
    rows = english_rows()
    rows[1] = {**rows[1], "id": rows[0]["id"]}
    write_parquet(rewardbench_file(snapshot), rows)
    with pytest.raises(InputError, match="duplicate id in RewardBench"):
        load_dataset("rewardbench", data_dir=snapshot)


def test_a_file_that_is_not_parquet(snapshot: Path) -> None:
    language_file(snapshot, "zh").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="cannot read as parquet"):
        load_dataset("m-rewardbench", data_dir=snapshot)


def test_missing_snapshots_say_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no RewardBench files"):
        load_dataset("rewardbench", data_dir=tmp_path)
    write_snapshot(tmp_path, languages=())
    with pytest.raises(InputError, match="no M-RewardBench snapshot"):
        load_dataset("m-rewardbench", data_dir=tmp_path)
    (tmp_path / "multilingual-reward-bench" / "translation").mkdir(parents=True)
    with pytest.raises(InputError, match="lacks 23 of the 23 languages") as info:
        load_dataset("m-rewardbench", data_dir=tmp_path)
    assert "m-rewardbench:LANG" in str(info.value)


def test_a_field_mapping_is_refused(snapshot: Path) -> None:
    with pytest.raises(Exception, match="field mapping"):
        load_dataset("rewardbench", data_dir=snapshot, mapping={"instruction": "prompt"})


def test_a_record_in_another_subset_than_rewardbench_says_is_a_misalignment(snapshot: Path) -> None:
    rows = language_rows("de", english_rows())
    rows[0] = {**rows[0], "source": "math-prm"}  # the fixture's first record is alpacaeval-easy
    write_parquet(language_file(snapshot, "de"), rows)
    with pytest.raises(InputError, match="do not line up") as info:
        load_dataset("m-rewardbench", data_dir=snapshot)
    assert "field 'source'" in str(info.value)
