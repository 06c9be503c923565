"""A RewardBench-shaped hub dataset is one table of configs/hub_datasets.toml and no code: a toy
table (its own column names, categories, and a multilingual companion table), backed by a local
snapshot of parquet files the test writes, is shown, listed, named in the help, narrowed by
--conditions and judged end to end. Another shape arrives from another package through the entry
point group `judgebench.datasets`. Bad tables and specs are named by file and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.data import families, load_dataset, spec_help
from judgebench.data.catalog import _plugins
from judgebench.data.dataset import narrowed_to
from judgebench.data.hubconfig import hub_datasets
from judgebench.errors import ConfigError, InputError
from tests.data.rewardbench_fixture import write_parquet
from tests.e2e.helpers import private_configs
from tests.fake_distribution import fake_distribution

runner = CliRunner()

TOY_TABLES = """
[toy]
repo = "example/toy-pairs"
revision = "0123456789abcdef0123456789abcdef01234567"
local_dir = "toy-pairs"
files = "data/train-*.parquet"
title = "ToyPairs"
description = "toy pairs for the registry test"

[toy.columns]
id = "uid"
prompt = "question"
chosen = "good"
rejected = "bad"
subset = "kind"

[toy.categories]
Easy = ["arith"]
Hard = ["logic"]

[toy-ml]
repo = "example/toy-pairs-ml"
revision = "89abcdef0123456789abcdef0123456789abcdef"
local_dir = "toy-pairs-ml"
files = "{config}/test-*.parquet"
title = "ToyPairs-ML"
description = "toy pairs translated"
english = "toy"
languages = { fr = "fra_Latn", de = "deu_Latn" }

[toy-ml.columns]
id = "uid"
prompt = "question"
chosen = "good"
rejected = "bad"
"""

PROMPTS = {
    "en": ("Add {n} and {n}, and explain each step of the sum.", "The sum is twice {n}.", "It is seven."),
    "fr": ("Additionne {n} et {n}, et explique chaque étape.", "La somme vaut deux fois {n}.", "C'est sept."),
    "de": ("Addiere {n} und {n} und erkläre jeden Schritt.", "Die Summe ist zweimal {n}.", "Es ist sieben."),
}
IDS = [4, 9, 16, 25, 36, 49]


def _rows(language: str) -> list[dict[str, object]]:
    prompt, good, bad = PROMPTS[language]
    rows: list[dict[str, object]] = []
    for index, uid in enumerate(IDS):
        row: dict[str, object] = {
            "uid": uid,
            "question": prompt.format(n=uid),
            "good": good.format(n=uid),
            "bad": bad,
        }
        if language == "en":
            row["kind"] = "arith" if index % 2 == 0 else "logic"
        rows.append(row)
    return rows if language != "de" else rows[:-1]  # de lacks the last item


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configs copy with the toy tables (JUDGEBENCH_CONFIGS), and the snapshot folder."""
    configs = private_configs(tmp_path / "configs")
    with open(configs / "hub_datasets.toml", "a", encoding="utf-8") as fh:
        fh.write(TOY_TABLES)
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    snap = tmp_path / "snap"
    write_parquet(snap / "toy-pairs" / "data" / "train-00000-of-00001.parquet", _rows("en"))
    for language, config in (("fr", "fra_Latn"), ("de", "deu_Latn")):
        write_parquet(snap / "toy-pairs-ml" / config / "test-00000-of-00001.parquet", _rows(language))
    return snap


def test_a_toy_table_is_a_dataset_with_no_code(toy: Path) -> None:
    shown = runner.invoke(app, ["data", "show", "toy", "--data-dir", str(toy), "--json"])
    assert shown.exit_code == 0, shown.output
    info = json.loads(shown.stdout)
    assert info["items"] == 6 and info["spec"] == "toy"
    assert info["subsets"] == {"Easy/arith": 3, "Hard/logic": 3}
    assert info["categories"] == {"Easy": 3, "Hard": 3}
    assert info["labels"]["1"] + info["labels"]["2"] == 6 and info["labels"]["1"] not in (0, 6)
    dataset = load_dataset("toy", data_dir=toy)
    first = dataset.items[0]
    assert first.id == "toy/4" and first.instruction == PROMPTS["en"][0].format(n=4)
    gold = first.output_1 if first.label == 1 else first.output_2
    assert gold == "The sum is twice 4."  # `good` is the chosen response, in either order
    listed = runner.invoke(app, ["data", "list", "--data-dir", str(toy)], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    assert "toy pairs for the registry test" in listed.stdout
    assert "local copy (2 of 2 languages)" in " ".join(listed.stdout.split())
    # the help is made from the registry, in a fresh process as a user runs it
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": os.pathsep.join(sys.path)}
    helped = subprocess.run(
        [sys.executable, "-m", "judgebench", "run", "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert "toy-ml[:LANG,...]" in " ".join(helped.stdout.split())
    assert "toy (toy pairs for the registry test)" in spec_help()


def test_a_toy_multilingual_table_carries_its_languages(toy: Path) -> None:
    dataset = load_dataset("toy-ml", data_dir=toy)
    assert len(dataset) == 6 and dataset.missing == {"de": 1, "fr": 0}
    assert dataset.language_configs == {"de": "deu_Latn", "fr": "fra_Latn"}
    assert dataset.variants["fr"][0].instruction == PROMPTS["fr"][0].format(n=4)
    assert families()["toy-ml"].conditions == ("de", "fr")
    # --conditions picks the languages it carries; `ls` is translated as before; other specs stay
    assert narrowed_to("toy-ml", ["fr", "ls"]) == "toy-ml:fr"
    assert narrowed_to("toy-ml", ["ls"]) == "toy-ml"
    assert narrowed_to("toy", ["fr"]) == "toy"
    assert narrowed_to("toy-ml:de", ["fr"]) == "toy-ml:de"
    only_fr = load_dataset("toy-ml:fr", data_dir=toy)
    assert set(only_fr.variants) == {"fr"} and only_fr.spec == "toy-ml:fr"


def test_run_judges_a_toy_table_end_to_end(
    toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    args = ["run", "--run", str(run), "--dataset", "toy-ml", "--data-dir", str(toy), "--conditions", "fr,de"]
    result = runner.invoke(app, [*args, "--model", "sim:unbiased", "--yes"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["dataset"]["spec"] == "toy-ml:fr,de" and manifest["dataset"]["items"] == 6
    judged = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
    assert {j["condition"] for j in judged} >= {"en", "fr", "de"}
    assert {j["item_id"].split("/")[0] for j in judged} == {"toy"}
    assert "en->fr" in (run / "report.md").read_text(encoding="utf-8")
    # the English table alone has no languages of its own (run would need a translator): judged in en
    alone = tmp_path / "alone"
    args = [
        "judge",
        "--run",
        str(alone),
        "--dataset",
        "toy",
        "--data-dir",
        str(toy),
        "--model",
        "sim:unbiased",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    judged = [json.loads(line) for line in (alone / "judgments.jsonl").read_text().splitlines()]
    assert {j["condition"] for j in judged} == {"en"} and len({j["item_id"] for j in judged}) == 6


def test_a_bad_table_is_named_by_file_and_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configs = private_configs(tmp_path / "configs")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    path = configs / "hub_datasets.toml"
    good = path.read_text(encoding="utf-8")
    for table, wanted in (
        (
            '[toy]\nrepo = "a/b"\nrevision = "x"\nlocal_dir = "b"\nfile = "*.parquet"\n',
            "key 'toy.file': unknown key",
        ),
        ('[toy]\nrepo = "a/b"\nrevision = "x"\nlocal_dir = "b"\n', "key 'toy.files': missing"),
        (
            '[toy]\nrepo = "a/b"\nrevision = "x"\nlocal_dir = "b"\nfiles = "*.parquet"\n'
            'languages = { fr = "fra_Latn" }\nenglish = "rewardbench"\n',
            "key 'toy': files must hold {config}",
        ),
        (
            '[toy]\nrepo = "a/b"\nrevision = "x"\nlocal_dir = "b"\nfiles = "*.parquet"\n'
            '[toy.columns]\nquestion = "q"\n',
            "key 'toy.columns.question': unknown key (known here: 'id', 'prompt'",
        ),
    ):
        path.write_text(good + "\n" + table, encoding="utf-8")
        with pytest.raises(InputError) as err:
            hub_datasets()
        assert str(err.value).startswith(f"{path}, line ") and wanted in str(err.value)
    path.write_text(good, encoding="utf-8")
    assert "toy" not in hub_datasets()


def test_a_suffix_a_family_does_not_take_is_refused() -> None:
    with pytest.raises(ConfigError, match="rewardbench takes no :SUFFIX"):
        load_dataset("rewardbench:zh")
    with pytest.raises(ConfigError, match="not to rewardbench"):
        load_dataset("rewardbench", mapping={"instruction": "prompt"})


def test_a_package_adds_a_dataset_through_an_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No edit of judgebench: a distribution declaring `judgebench.datasets` makes its name a SPEC."""
    fake_distribution(
        tmp_path, "toydata", "judgebench.datasets", "toyplug = tests.data.toy_dataset_plugin:TOYPLUG"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _plugins.cache_clear()
    try:
        assert "toyplug" in families()
        dataset = load_dataset("toyplug:3")
        assert [item.id for item in dataset] == ["toyplug/0", "toyplug/1", "toyplug/2"]
        shown = runner.invoke(app, ["data", "show", "toyplug:2", "--json"])
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["items"] == 2
        listed = runner.invoke(app, ["data", "list"], env={"COLUMNS": "200"})
        assert "made up in code by a plugin" in listed.stdout
    finally:
        monkeypatch.undo()
        _plugins.cache_clear()
        sys.modules.pop("tests.data.toy_dataset_plugin", None)
    assert "toyplug" not in families()


def test_a_bad_table_leaves_the_help_standing_and_stops_a_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The help is made when the CLI starts: a broken hub_datasets.toml must not take every command
    down with a traceback; loading a dataset names the file and what is wrong."""
    configs = private_configs(tmp_path / "configs")
    (configs / "hub_datasets.toml").write_text("[toy]\nrepo = \n", encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": os.pathsep.join(sys.path)}
    env["JUDGEBENCH_CONFIGS"] = str(configs)
    cmd = [sys.executable, "-m", "judgebench"]
    helped = subprocess.run([*cmd, "run", "--help"], capture_output=True, text=True, env=env, check=False)
    assert helped.returncode == 0, helped.stderr
    assert "hub datasets left out" in " ".join(helped.stdout.split())
    shown = subprocess.run(
        [*cmd, "data", "show", "toy"], capture_output=True, text=True, env=env, check=False
    )
    assert shown.returncode != 0 and "Traceback" not in shown.stderr
    assert "hub_datasets.toml" in shown.stderr and "not valid TOML" in shown.stderr
