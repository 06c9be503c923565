"""api.report.explorer_data: en texts from the run's dataset, the others from variants.jsonl, and a
dataset that cannot be loaded leaves the en texts out rather than failing the report."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from judgebench.errors import RunDirError
from judgebench.records import Item, Variant
from judgebench.rundir import JsonlAppender, RunDir

api_report = importlib.import_module("judgebench.api.report")  # the module; api.report is a function

ITEM = Item(id="x", subset="Natural", instruction="Say hi", output_1="hi", output_2="bye", label=1)


RECORDED = SimpleNamespace(spec="sample", data_dir=None)


def _inputs(run: RunDir) -> Any:
    """The report's inputs with the items read the way `_read_inputs` reads them (once per report)."""
    return api_report._RunInputs(audit=[], order=["en", "zh"], planned=None, items=api_report._run_items(run))


def test_texts_come_from_the_dataset_and_the_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with JsonlAppender(tmp_path / "variants.jsonl") as out:
        out.append(Variant(item_id="x", condition="zh", instruction="旧", output_1="a", output_2="b"))
        out.append(
            Variant(item_id="x", condition="zh", instruction="说你好", output_1="你好", output_2="再见")
        )
    monkeypatch.setattr(
        api_report, "load_run_dataset", lambda run, d, dd: (SimpleNamespace(items=[ITEM]), None)
    )
    monkeypatch.setattr(RunDir, "manifest", lambda self: SimpleNamespace(dataset=RECORDED))
    data = api_report.explorer_data(RunDir(tmp_path), _inputs(RunDir(tmp_path)))
    assert data.texts[("x", "en")].output_2 == "bye"
    assert data.texts[("x", "zh")].instruction == "说你好"  # the last line per key wins
    assert list(data.conditions) == ["en", "zh"]


def test_an_unloadable_dataset_only_drops_the_en_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object) -> None:
        raise RunDirError("no dataset")

    monkeypatch.setattr(api_report, "load_run_dataset", fail)
    monkeypatch.setattr(RunDir, "manifest", lambda self: SimpleNamespace(dataset=RECORDED))
    data = api_report.explorer_data(RunDir(tmp_path), _inputs(RunDir(tmp_path)))
    assert data.texts == {}


def test_llmbar_without_a_data_dir_is_read_from_the_cache_never_downloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []

    def load(run: RunDir, dataset: str | None, data_dir: str | None) -> Any:
        seen.append(data_dir)
        raise RunDirError("not cached")

    monkeypatch.setattr(api_report, "load_run_dataset", load)
    monkeypatch.setattr(
        RunDir,
        "manifest",
        lambda self: SimpleNamespace(dataset=SimpleNamespace(spec="llmbar", data_dir=None)),
    )
    monkeypatch.setattr(api_report, "llmbar_cache_root", lambda: tmp_path / "cache" / "llmbar")
    assert api_report.explorer_data(RunDir(tmp_path), _inputs(RunDir(tmp_path))).texts == {}
    assert seen == [str(tmp_path / "cache" / "llmbar")]  # a local copy: load_llmbar reads, fetches nothing
