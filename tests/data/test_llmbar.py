"""LLMBar from a local copy: counts, stable ids, the other sets, modified and incomplete copies."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from judgebench.data import (
    LLMBAR_SUBSETS,
    OTHER_SETS,
    PUBLISHED_SHA256,
    LLMBarChecksumWarning,
    llmbar_root,
    load_dataset,
)
from judgebench.data.llmbar import cache_root
from judgebench.errors import ConfigError, InputError


def published(llmbar_dir: Path, rel: str) -> list[dict[str, object]]:
    data = json.loads((llmbar_dir / rel).read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def test_llmbar_counts_match_the_published_files(llmbar_dir: Path) -> None:
    ds = load_dataset("llmbar", data_dir=llmbar_dir)
    files = {subset: published(llmbar_dir, rel) for subset, rel in LLMBAR_SUBSETS.items()}
    labels = [row["label"] for rows in files.values() for row in rows]
    assert ds.describe() == {
        "items": sum(len(rows) for rows in files.values()),
        "subsets": {subset: len(rows) for subset, rows in files.items()},
        "labels": {"1": labels.count(1), "2": labels.count(2)},
    }
    # the figures of the acceptance check, via the library
    assert ds.describe()["items"] == 419
    assert list(ds.describe()["subsets"].values()) == [100, 134, 92, 47, 46]
    assert ds.describe()["labels"] == {"1": 206, "2": 213}


def test_ids_are_subset_path_and_index(llmbar_dir: Path) -> None:
    by_id = load_dataset("llmbar", data_dir=llmbar_dir).by_id()
    neighbor = published(llmbar_dir, LLMBAR_SUBSETS["Adversarial/Neighbor"])
    item = by_id["Adversarial/Neighbor/17"]
    assert item.subset == "Adversarial/Neighbor"
    assert (item.instruction, item.output_1, item.output_2, item.label) == tuple(
        neighbor[17][k] for k in ("input", "output_1", "output_2", "label")
    )
    natural = published(llmbar_dir, LLMBAR_SUBSETS["Natural"])
    assert by_id["Natural/0"].instruction == natural[0]["input"]
    assert f"Natural/{len(natural) - 1}" in by_id and f"Natural/{len(natural)}" not in by_id


def test_checksum_is_stable_and_depends_on_the_selection(llmbar_dir: Path) -> None:
    full = load_dataset("llmbar", data_dir=llmbar_dir)
    assert load_dataset("llmbar", data_dir=llmbar_dir).checksum == full.checksum
    adversarial = load_dataset("llmbar", data_dir=llmbar_dir, subset="Adversarial")
    assert adversarial.describe()["items"] == full.describe()["items"] - full.describe()["subsets"]["Natural"]
    assert adversarial.checksum != full.checksum
    # `llmbar:Adversarial` names the same selection
    assert load_dataset("llmbar:Adversarial", data_dir=llmbar_dir).checksum == adversarial.checksum


@pytest.mark.parametrize("name", sorted(OTHER_SETS))
def test_other_sets_load_with_path_ids(llmbar_dir: Path, name: str) -> None:
    ds = load_dataset(f"llmbar:{name}", data_dir=llmbar_dir)
    rows = published(llmbar_dir, OTHER_SETS[name])
    assert ds.describe()["subsets"] == {name: len(rows)}
    assert ds.items[3].id == f"{name}/3"
    assert ds.items[3].output_2 == rows[3]["output_2"]


def test_processed_set_with_a_caret_and_a_blank_output(llmbar_dir: Path) -> None:
    """LLMEval^2 holds one blank output_2 in the published data: LLMBar sets admit it, user files do not."""
    ds = load_dataset("llmbar:Processed/LLMEval^2", data_dir=llmbar_dir)
    blank = [item.id for item in ds.items if not item.output_2.strip()]
    rows = published(llmbar_dir, OTHER_SETS["Processed/LLMEval^2"])
    assert blank == [f"Processed/LLMEval^2/{i}" for i, r in enumerate(rows) if not str(r["output_2"]).strip()]


def test_set_names_are_case_insensitive_and_typos_get_a_suggestion(llmbar_dir: Path) -> None:
    assert (
        load_dataset("llmbar:processed/mt-bench", data_dir=llmbar_dir).items[0].id == "Processed/MT-Bench/0"
    )
    assert load_dataset("LLMBar:LLMBar/Natural", data_dir=llmbar_dir).describe()["subsets"] == {
        "Natural": 100
    }
    with pytest.raises(InputError, match=r"did you mean llmbar:CaseStudy/Constraint\?"):
        load_dataset("llmbar:CaseStudy/Constrant", data_dir=llmbar_dir)


def test_data_dir_may_be_the_dataset_folder_itself(llmbar_dir: Path) -> None:
    assert llmbar_root(llmbar_dir / "Dataset") == llmbar_dir
    ds = load_dataset("llmbar:Natural", data_dir=llmbar_dir / "Dataset")
    assert len(ds) == len(published(llmbar_dir, LLMBAR_SUBSETS["Natural"]))


def test_bad_data_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such folder"):
        llmbar_root(tmp_path / "absent")
    with pytest.raises(InputError, match="holds no Dataset/ folder"):
        load_dataset("llmbar", data_dir=tmp_path)
    assert llmbar_root(None) == cache_root()


def copy_llmbar(llmbar_dir: Path, dest: Path) -> Path:
    for rel in LLMBAR_SUBSETS.values():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(llmbar_dir / rel, dest / rel)
    return dest


def test_unmodified_copy_loads_without_warning(llmbar_dir: Path, tmp_path: Path) -> None:
    copy = copy_llmbar(llmbar_dir, tmp_path / "copy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_dataset("llmbar", data_dir=copy)
    assert ds.checksum == load_dataset("llmbar", data_dir=llmbar_dir).checksum
    assert ds.files == {str(copy / rel): PUBLISHED_SHA256[rel] for rel in LLMBAR_SUBSETS.values()}


def test_modified_copy_warns_and_loads_as_is(llmbar_dir: Path, tmp_path: Path) -> None:
    copy = copy_llmbar(llmbar_dir, tmp_path / "copy")
    natural = copy / LLMBAR_SUBSETS["Natural"]
    rows = json.loads(natural.read_text(encoding="utf-8"))
    natural.write_text(json.dumps(rows[:-1]), encoding="utf-8")  # one item fewer: counts are not enforced
    with pytest.warns(LLMBarChecksumWarning, match="differs from the published LLMBar file") as record:
        ds = load_dataset("llmbar", data_dir=copy)
    assert len(record) == 1 and str(natural) in str(record[0].message)
    assert ds.describe()["subsets"]["Natural"] == len(rows) - 1


def test_incomplete_copy_names_the_missing_file(llmbar_dir: Path, tmp_path: Path) -> None:
    copy = copy_llmbar(llmbar_dir, tmp_path / "copy")
    (copy / LLMBAR_SUBSETS["Adversarial/GPTOut"]).unlink()
    with pytest.raises(InputError) as info:
        load_dataset("llmbar", data_dir=copy)
    assert info.value.path == str(copy / LLMBAR_SUBSETS["Adversarial/GPTOut"])
    assert "missing from the local LLMBar copy" in info.value.reason


def test_corrupt_local_file_gets_a_precise_error(llmbar_dir: Path, tmp_path: Path) -> None:
    copy = copy_llmbar(llmbar_dir, tmp_path / "copy")
    manual = copy / LLMBAR_SUBSETS["Adversarial/Manual"]
    rows = json.loads(manual.read_text(encoding="utf-8"))
    rows[5]["label"] = 3
    manual.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    with pytest.raises(InputError) as info, pytest.warns(LLMBarChecksumWarning):
        load_dataset("llmbar", data_dir=copy)
    assert (info.value.item, info.value.field) == ("Adversarial/Manual/5", "label")
    assert manual.read_text(encoding="utf-8").splitlines()[info.value.line - 1].strip() == "{"  # type: ignore[operator]


def test_mapping_is_refused_for_llmbar(llmbar_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"(?i)not to llmbar"):
        load_dataset("llmbar", data_dir=llmbar_dir, mapping={"instruction": "input"})


def test_a_published_file_loads_as_a_generic_json_array(llmbar_dir: Path) -> None:
    path = llmbar_dir / LLMBAR_SUBSETS["Natural"]
    generic = load_dataset(str(path))
    named = load_dataset("llmbar:Natural", data_dir=llmbar_dir)
    assert [(i.instruction, i.label) for i in generic.items] == [
        (i.instruction, i.label) for i in named.items
    ]
    assert generic.items[0].id == "dataset/0" and generic.items[0].subset == "default"
