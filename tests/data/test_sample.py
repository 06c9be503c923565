"""The bundled sample set (written by the team in data/): it loads, and its variants match its ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench.data import LLMBAR_SUBSETS, load_dataset, sample_path, sample_variants_path
from judgebench.errors import InputError
from judgebench.records import Variant
from judgebench.store.run_folder import read_jsonl


def test_sample_paths_live_in_the_data_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUDGEBENCH_DATA", str(tmp_path))
    assert sample_path() == tmp_path / "sample.jsonl"
    assert sample_variants_path() == tmp_path / "sample_variants.jsonl"
    with pytest.raises(InputError, match="bundled sample set is missing"):
        load_dataset("sample")


def test_sample_spec_reads_item_jsonl(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUDGEBENCH_DATA", str(tmp_path))
    (tmp_path / "sample.jsonl").write_text(
        '{"id": "Natural/0", "subset": "Natural", "instruction": "Hi?", "output_1": "Hi.", "output_2": "No.",'
        ' "label": 1}\n',
        encoding="utf-8",
    )
    ds = load_dataset("sample")
    assert (
        ds.spec == "sample" and ds.items[0].id == "Natural/0" and ds.source == str(tmp_path / "sample.jsonl")
    )


@pytest.fixture
def bundled() -> Path:
    if not sample_path().is_file():
        pytest.skip("data/sample.jsonl is not written yet")
    return sample_path()


def test_bundled_sample_is_a_valid_labelled_set_over_the_five_categories(bundled: Path) -> None:
    ds = load_dataset("sample")
    assert len(ds) >= 24
    assert all(item.label in (1, 2) for item in ds.items)
    assert set(ds.subsets()) == set(LLMBAR_SUBSETS)
    assert all(item.id.startswith(item.subset + "/") for item in ds.items)


def test_bundled_variants_refer_to_sample_items(bundled: Path) -> None:
    if not sample_variants_path().is_file():
        pytest.skip("data/sample_variants.jsonl is not written yet")
    ids = set(load_dataset("sample").by_id())
    variants = list(read_jsonl(sample_variants_path(), Variant))
    assert variants
    assert {v.item_id for v in variants} <= ids
    keys = [(v.item_id, v.condition) for v in variants]
    assert len(keys) == len(set(keys)), "one variant per item and condition"
