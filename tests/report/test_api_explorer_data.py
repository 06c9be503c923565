"""api.report.explorer_data: en texts from the run's dataset, the others from variants.jsonl, and a
dataset that cannot be loaded leaves the en texts out rather than failing the report."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from judgebench.errors import InputError, RunDirError
from judgebench.records import Item, Variant
from judgebench.store.run_folder import JsonlAppender, RunDir

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
    texts = data.texts_of(["x"])
    assert texts[("x", "en")].output_2 == "bye"
    assert texts[("x", "zh")].instruction == "说你好"  # the last line per key wins
    assert list(data.conditions) == ["en", "zh"]


@pytest.mark.parametrize("damaged", [False, True])
def test_only_the_shown_items_variants_are_read_and_the_last_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damaged: bool
) -> None:
    """The fast path reads variants.jsonl's item column and validates only the lines of the items
    asked for; a file it cannot vouch for (a line that is not JSON) goes to the exact reader, which
    gives the same texts or names the bad line."""
    validated: list[str] = []
    real = Variant.model_validate_json.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Variant], data: Any, **kw: Any) -> Variant:
        validated.append(cls.__name__)
        return real(cls, data, **kw)  # type: ignore[no-any-return]

    with JsonlAppender(tmp_path / "variants.jsonl") as out:
        for i in range(50):
            out.append(
                Variant(item_id=f"i{i}", condition="zh", instruction=f"q{i}", output_1="a", output_2="b")
            )
        out.append(Variant(item_id="i7", condition="zh", instruction="newer", output_1="a", output_2="b"))
        out.append(Variant(item_id="i7", condition="ls", instruction="mixed", output_1="a", output_2="b"))
    monkeypatch.setattr(Variant, "model_validate_json", classmethod(counting))
    monkeypatch.setattr(RunDir, "manifest", lambda self: SimpleNamespace(dataset=None))
    inputs = api_report._RunInputs(audit=[], order=["en", "zh", "ls"], planned=None, items=[])
    data = api_report.explorer_data(RunDir(tmp_path), inputs)
    texts = data.texts_of(["i7", "i9"])
    assert {k: v.instruction for k, v in texts.items()} == {
        ("i7", "zh"): "newer",
        ("i9", "zh"): "q9",
        ("i7", "ls"): "mixed",
    }
    assert len(validated) == 4  # the four lines of i7 and i9, not all 52
    if damaged:
        with open(tmp_path / "variants.jsonl", "a", encoding="utf-8") as fh:
            fh.write("not json at all\n")
        with pytest.raises(InputError, match=r"variants\.jsonl.*line 53"):
            api_report.explorer_data(RunDir(tmp_path), inputs).texts_of(["i7"])


def test_an_unloadable_dataset_only_drops_the_en_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object) -> None:
        raise RunDirError("no dataset")

    monkeypatch.setattr(api_report, "load_run_dataset", fail)
    monkeypatch.setattr(RunDir, "manifest", lambda self: SimpleNamespace(dataset=RECORDED))
    data = api_report.explorer_data(RunDir(tmp_path), _inputs(RunDir(tmp_path)))
    assert data.texts_of(["x"]) == {}


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
    assert api_report.explorer_data(RunDir(tmp_path), _inputs(RunDir(tmp_path))).texts_of(["x"]) == {}
    assert seen == [str(tmp_path / "cache" / "llmbar")]  # a local copy: load_llmbar reads, fetches nothing
