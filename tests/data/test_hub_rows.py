"""Rows of the hub datasets that cannot be judged (null, empty, non-text prompt/chosen/rejected) and
the dataset checksum over every file that contributes items (English and each language)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench.api import JudgeRequest, TranslateRequest, judge, translate
from judgebench.data import load_dataset
from judgebench.data.dataset import items_checksum
from judgebench.errors import InputError
from judgebench.records.manifest import DatasetEntry
from judgebench.store.run_folder import RunDir
from tests.data.rewardbench_fixture import (
    FIXTURE_IDS,
    english_rows,
    language_file,
    language_rows,
    rewardbench_file,
    write_parquet,
    write_snapshot,
)

LANGS = "m-rewardbench:zh,ja,de"


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_snapshot(tmp_path / "hub", languages=("zh", "ja", "de"))


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [("prompt", None, "missing (null)"), ("chosen", "", "empty"), ("rejected", 7, "a number")],
)
def test_an_english_row_without_usable_text_names_file_row_item_and_field(
    snapshot: Path, column: str, value: object, problem: str
) -> None:
    rows = english_rows()
    # parquet holds one type per column: a number column is numbers in every row (row 1 fails first)
    at = 0 if isinstance(value, int) else 2
    rows = [{**r, column: value} if i == at or isinstance(value, int) else r for i, r in enumerate(rows)]
    write_parquet(rewardbench_file(snapshot), rows)
    with pytest.raises(InputError) as info:
        load_dataset("rewardbench", data_dir=snapshot)
    message = str(info.value)
    assert message.startswith(
        f"{rewardbench_file(snapshot)}, row {at + 1}, item rewardbench/{rows[at]['id']}"
    )
    assert f"field '{column}'" in message and problem in message
    assert "--skip-bad-rows" in message  # the way out, for a newcomer


def test_a_null_prompt_in_a_language_fails_naming_its_row(snapshot: Path) -> None:
    rows = language_rows("zh", english_rows())
    rows[4] = {**rows[4], "prompt": None}
    write_parquet(language_file(snapshot, "zh"), rows)
    with pytest.raises(InputError) as info:
        load_dataset(LANGS, data_dir=snapshot)
    message = str(info.value)
    assert str(language_file(snapshot, "zh")) in message and "row 5" in message
    assert f"item rewardbench/{rows[4]['id']}" in message and "field 'prompt'" in message
    assert "the prompt is missing (null)" in message


def test_skip_bad_rows_leaves_them_out_counted_and_reported(snapshot: Path) -> None:
    english = english_rows()
    english[0] = {**english[0], "prompt": "   "}
    write_parquet(rewardbench_file(snapshot), english)
    zh = language_rows("zh", english_rows())
    zh[1] = {**zh[1], "rejected": None}
    write_parquet(language_file(snapshot, "zh"), zh)
    ds = load_dataset(LANGS, data_dir=snapshot, skip_bad_rows=True)
    n = len(FIXTURE_IDS) - 2  # FIXTURE_NOWHERE, and the English row skipped
    assert len(ds) == n and f"rewardbench/{english[0]['id']}" not in ds.by_id()
    assert len(ds.variants["de"]) == n  # its translations went with it, without an alignment error
    assert len(ds.variants["zh"]) == n - 1 and ds.missing["zh"] == 1
    info = ds.describe()
    assert sum(v for k, v in info["excluded"].items() if "skipped" in k) == 2
    assert len(info["skipped_rows"]) == 2
    assert any("row 2" in line and "rejected" in line and "null" in line for line in info["skipped_rows"])
    entry = ds.manifest_entry()
    assert entry.skip_bad_rows and entry.skipped_rows == 2
    # without the option the same copy stops at the first bad row
    with pytest.raises(InputError, match="row 1"):
        load_dataset(LANGS, data_dir=snapshot)


def test_the_checksum_covers_every_language_file(snapshot: Path) -> None:
    before = load_dataset(LANGS, data_dir=snapshot)
    english = load_dataset("rewardbench", data_dir=snapshot)
    assert english.checksum == items_checksum(english.items)  # unchanged for a dataset without variants
    assert before.checksum != english.checksum
    assert set(before.condition_checksums) == {"en", "zh", "ja", "de"}
    rows = language_rows("zh", english_rows())
    rows[0] = {**rows[0], "chosen": rows[0]["chosen"] + "。"}
    write_parquet(language_file(snapshot, "zh"), rows)
    after = load_dataset(LANGS, data_dir=snapshot)
    assert after.checksum != before.checksum
    assert after.condition_checksums["zh"] != before.condition_checksums["zh"]
    assert {c: after.condition_checksums[c] for c in ("en", "ja", "de")} == {
        c: before.condition_checksums[c] for c in ("en", "ja", "de")
    }
    entry = after.manifest_entry()
    assert entry.conditions == after.condition_checksums and entry.checksum == after.checksum
    assert after.describe()["condition_checksums"] == after.condition_checksums  # data show --json


def test_a_manifest_of_an_older_release_still_matches_its_items(snapshot: Path) -> None:
    ds = load_dataset(LANGS, data_dir=snapshot)
    new = ds.manifest_entry()
    old = DatasetEntry.model_validate(
        {"spec": "m-rewardbench", "checksum": items_checksum(ds.items), "items": len(ds), "files": {}}
    )
    assert old.conditions == {} and old.same_data(new)
    assert new.same_data(new)
    other = DatasetEntry.model_validate({**new.model_dump(), "checksum": "0" * 64})
    assert not other.same_data(new) and not new.same_data(other)
    stale = DatasetEntry.model_validate({"spec": "m-rewardbench", "checksum": "1" * 64})
    assert not stale.same_data(new)


def test_a_run_that_skipped_bad_rows_skips_them_in_every_later_stage(snapshot: Path, tmp_path: Path) -> None:
    rows = language_rows("ja", english_rows())
    rows[3] = {**rows[3], "prompt": None}
    write_parquet(language_file(snapshot, "ja"), rows)
    run = tmp_path / "run"
    with pytest.raises(InputError, match="row 4"):
        translate(run, TranslateRequest(dataset=LANGS, data_dir=str(snapshot), conditions="zh,ja"))
    done = translate(
        run, TranslateRequest(dataset=LANGS, data_dir=str(snapshot), conditions="zh,ja", skip_bad_rows=True)
    )
    n = len(FIXTURE_IDS) - 1
    assert done.imported == n + (n - 2)  # ja lacks FIXTURE_NOT_IN_JA and the skipped row
    manifest = RunDir(run).manifest()
    assert manifest.dataset is not None and manifest.dataset.skip_bad_rows
    # the judge stage reloads the dataset from the manifest: the same rows are left out, no error
    estimates = judge(run, JudgeRequest(models=["sim:unbiased"], dry_run=True)).estimates
    assert estimates and estimates[0].calls > 0
