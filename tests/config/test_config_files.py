"""Every configuration file, read by its own loader, refuses an unknown key, a wrong type and a
repeated key in one error style: `FILE, line N, key 'TABLE.KEY': what is wrong` (a ConfigFileError,
which is also the InputError and ConfigError its callers catch). Each case is the shipped file with
one line changed, read through the command's own loader from a copied configs folder."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from judgebench.conditions import load_conditions
from judgebench.config.load import key_line, load_config
from judgebench.config.paths import configs_dir
from judgebench.costing.durations import load_rates
from judgebench.costing.output_tokens import load_table
from judgebench.data.hubconfig import hub_datasets
from judgebench.errors import ConfigError, ConfigFileError, InputError
from judgebench.judge.templates import load_template
from judgebench.models.config import load_judges
from judgebench.models.family_table import load_family_table
from judgebench.models.pricing import PriceTable
from judgebench.models.sim import load_scenario
from judgebench.models.vendors import _vendors, vendors
from judgebench.probes.probe_registry import load_probes
from tests.conftest import REPO

CONFIGS = REPO / "configs"


@dataclass(frozen=True)
class Case:
    """How one configuration file is read, and where its changes go: `table` takes the unknown key
    (a table whose keys are fixed; () is the top level) and `key` of `key_table` (default `table`)
    gets a wrong type and is repeated."""

    load: Callable[[], Any]
    table: tuple[Any, ...]
    key: str
    key_table: tuple[Any, ...] | None = None


def _template(name: str) -> Callable[[], Any]:
    return lambda: load_template(configs_dir() / "templates" / name)


CASES: dict[str, Case] = {
    "call_seconds.toml": Case(load_rates, ("measured", 0), "cores"),
    "conditions.toml": Case(load_conditions, ("conditions", "zh"), "tie_probe"),
    "hub_datasets.toml": Case(hub_datasets, ("rewardbench",), "local_dir"),
    "judges.toml": Case(load_judges, ("judges", "gpt41mini"), "rpm"),
    "model_families.toml": Case(load_family_table, (), "openai", key_table=("providers",)),
    "output_tokens.toml": Case(load_table, ("measured", 0), "judgments"),
    "prices.toml": Case(PriceTable.load, ("openai", "gpt-4.1-mini"), "input"),
    "sim.toml": Case(lambda: load_scenario("default"), ("scenarios", "default"), "seed"),
    # read once per path in a process (models/vendors.py): each read here is a fresh one
    "vendors.toml": Case(lambda: (_vendors.cache_clear(), vendors())[1], ("deepseek",), "json_schema"),
    **{f"probes/{p.name}": Case(load_probes, (), "description") for p in (CONFIGS / "probes").glob("*.toml")},
    **{
        f"templates/{p.name}": Case(_template(p.name), (), "name")
        for p in (CONFIGS / "templates").glob("*.toml")
    },
}


def test_every_configuration_file_has_a_case() -> None:
    """A new configs/*.toml (or probe, or template) is added here, so the checks below cover it."""
    shipped = {str(p.relative_to(CONFIGS)) for p in CONFIGS.rglob("*.toml")}
    assert shipped == set(CASES)


def _dotted(parts: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _key_at(lines: list[str], start: int, key: str) -> int:
    """The index of the line that sets `key` at or after line index `start` (before the next table)."""
    for index in range(start, len(lines)):
        if re.match(rf"^\s*{re.escape(key)}\s*=", lines[index]):
            return index
        assert index == start or not lines[index].lstrip().startswith("["), f"no {key} in its table"
    raise AssertionError(f"no line sets {key}")


def _changed(name: str, case: Case, change: str) -> tuple[Path, str, int]:
    """The file with one change, and the key path and line the error must name."""
    text = (configs_dir() / name).read_text(encoding="utf-8")
    lines = text.splitlines()
    if change == "unknown":
        at = key_line(text, case.table) if case.table else 0
        assert at is not None
        lines.insert(at, "zz_unknown_key = 1")
        (configs_dir() / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return configs_dir() / name, _dotted((*case.table, "zz_unknown_key")), at + 1
    table = case.table if case.key_table is None else case.key_table
    start = (key_line(text, table) or 1) if table else 0
    index = _key_at(lines, start, case.key)
    if change == "wrong type":
        lines[index] = f'{case.key} = {{ wrong = "type" }}'
    else:  # repeated: the same line again, right after it
        lines.insert(index + 1, lines[index])
        index += 1
    (configs_dir() / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return configs_dir() / name, _dotted((*table, case.key)), index + 1


@pytest.fixture
def copied_configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "configs"
    shutil.copytree(CONFIGS, folder)
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(folder))
    return folder


@pytest.mark.parametrize("change", ["unknown", "wrong type", "repeated"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_key_is_named_with_its_file_line_and_path(copied_configs: Path, name: str, change: str) -> None:
    case = CASES[name]
    case.load()  # the shipped file reads
    path, key, line = _changed(name, case, change)
    with pytest.raises(ConfigFileError) as caught:
        case.load()
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}, key '{key}': "), message
    reason = {"unknown": "unknown key", "wrong type": "valid", "repeated": "not valid TOML"}[change]
    assert reason in message.partition(f"key '{key}': ")[2], message
    assert isinstance(caught.value, InputError) and isinstance(caught.value, ConfigError)


class _Toy(BaseModel):
    """A configuration file the project does not have: a model and one call are all it needs."""

    model_config = ConfigDict(extra="forbid")

    greeting: str
    repeat: int = Field(default=1, ge=1)
    extras: dict[str, list[int]] = Field(default_factory=dict)


def test_a_new_configuration_file_needs_only_a_model_and_one_call(tmp_path: Path) -> None:
    file = tmp_path / "toy.toml"
    file.write_text('greeting = "hello"\nrepeat = 2\n\n[extras]\nodd = [1, 3]\n', encoding="utf-8")
    assert load_config(file, _Toy) == _Toy(greeting="hello", repeat=2, extras={"odd": [1, 3]})
    cases = {
        'greeting = "hi"\nrepeat = 0\n': (2, "repeat", "greater than or equal to 1"),
        'greeting = "hi"\n\n[extras]\nodd = [1, "x"]\n': (4, "extras.odd[1]", "valid integer"),
        'greeting = "hi"\ngreting = "typo"\n': (
            2,
            "greting",
            "unknown key (known here: greeting, repeat, extras)",
        ),
        "repeat = 2\n": (None, "greeting", "missing"),
        'greeting = "hi"\ngreeting = "again"\n': (2, "greeting", "not valid TOML"),
        'greeting = "hi"\nextras = ' + "[" * 101 + "]" * 101 + "\n": (2, "extras", "nested deeper than 100"),
    }
    for text, (line, key, reason) in cases.items():
        file.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigFileError) as caught:
            load_config(file, _Toy)
        where = f"{file}, line {line}" if line is not None else str(file)
        assert str(caught.value).startswith(f"{where}, key '{key}': "), str(caught.value)
        assert reason in str(caught.value)


class _Optional(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repeat: int = 1


def test_a_missing_or_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match=re.escape(f"{tmp_path / 'absent.toml'}: file not found")):
        load_config(tmp_path / "absent.toml", _Toy)
    assert load_config(tmp_path / "absent.toml", _Optional, missing_ok=True) == _Optional()
    (tmp_path / "latin.toml").write_bytes('greeting = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigFileError, match=r"latin\.toml: not UTF-8 text"):
        load_config(tmp_path / "latin.toml", _Toy)


def test_a_condition_audit_threshold_out_of_range_is_named_at_load(copied_configs: Path) -> None:
    """Before, conditions.toml's audit thresholds were range-checked only when `translate` built its
    rules, in a message that named neither the file nor the key; now the load names both."""
    path = copied_configs / "conditions.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("min_length_ratio = 0.10", "min_length_ratio = 1.5", 1), encoding="utf-8")
    with pytest.raises(ConfigFileError) as caught:
        load_conditions()
    line = text.splitlines().index("min_length_ratio = 0.10") + 1
    assert str(caught.value).startswith(f"{path}, line {line}, key 'conditions.zh.audit.min_length_ratio': ")
    assert "less than or equal to 1" in str(caught.value)
    path.write_text(text, encoding="utf-8")
    assert load_conditions()["zh"].audit.min_length_ratio == 0.10
