"""A command resolves each `--model` once: `configs/judges.toml` and `configs/prices.toml` are opened
at most once by `judge` on a finished run and by the whole `judgebench run` (issue 25). The opens are
counted by wrapping `open` (every file read goes through it), the reads themselves left to happen."""

from __future__ import annotations

import builtins
import io
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.config.paths import configs_dir
from judgebench.data.dataset import sample_variants_path
from judgebench.models import Judges

WATCHED = ("judges.toml", "prices.toml")


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Counter[str]]:
    """Counts of the opens of the watched config files, from a copy of configs/ that also names a
    judge `simj` (a configured name, the path that reads judges.toml for its table)."""
    configs = tmp_path / "configs"
    shutil.copytree(configs_dir(), configs)
    with (configs / "judges.toml").open("a", encoding="utf-8") as out:
        out.write('\n[judges.simj]\nspec = "sim:default"\nconcurrency = 4\ntemperature = 0\n')
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    counts: Counter[str] = Counter()
    real_open = io.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        name = Path(file).name if isinstance(file, (str, Path)) else ""
        if name in WATCHED:
            counts[name] += 1
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    yield counts


def _invoke(args: list[str]) -> None:
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output


def test_the_counter_sees_each_read(opens: Counter[str]) -> None:
    """The hook counts what it should: two loads are two opens (a check that can fail)."""
    Judges.load()
    Judges.load()
    assert opens == Counter({"judges.toml": 2, "prices.toml": 2})


def test_judge_on_a_finished_run_reads_the_judge_config_once(opens: Counter[str], tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    _invoke(["translate", "--run", run, "--dataset", "sample", "--variants", _variants(), "--limit", "3"])
    judge = ["judge", "--run", run, "--model", "simj", "--model", "sim:biased"]
    _invoke(judge)
    opens.clear()
    _invoke(judge)  # finished: nothing left to call
    assert opens["judges.toml"] == 1 and opens["prices.toml"] <= 1, opens
    opens.clear()
    _invoke([*judge, "--dry-run"])
    assert opens["judges.toml"] == 1 and opens["prices.toml"] <= 1, opens


def test_run_reads_the_judge_config_once(opens: Counter[str], tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    _invoke(["run", "--run", run, "--model", "simj", "--model", "sim:default", "--limit", "4", "--yes"])
    assert opens["judges.toml"] == 1 and opens["prices.toml"] <= 1, opens
    assert (tmp_path / "run" / "judgments.jsonl").is_file()


def _variants() -> str:
    return str(sample_variants_path())
