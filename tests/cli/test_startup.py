"""Issue 26, startup: `judgebench --help` (and each command's) loads none of the heavy libraries.
Checked by what a fresh interpreter has in sys.modules, never by a clock: the wall figures are
scripts/bench_startup.py's. The CLI is thin and loads `judgebench.api` inside each command's function
(the one lazy seam for the library); records/ and data/ name their models on first use, so that the
consoles (records.sanitize) and the dataset registry (data.catalog) load without pydantic."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

import judgebench
from judgebench import records
from judgebench.records import judgments
from tests.architecture.test_startup_imports import DEFERRED

SRC = Path(judgebench.__file__).resolve().parents[1]
cli_app = importlib.import_module("judgebench.cli.app")  # the module (judgebench.cli.app is the Typer app)

# What `--help` must not pay for: the data and plotting stack, the statistics, the provider SDKs and
# local model runtimes, the HTTP and hub clients, and the library API.
HEAVY = (*DEFERRED, "pandas", "numpy", "pyarrow", "httpx", "judgebench.api")

_PROBE = """
import json, sys
{prelude}
sys.argv = ["judgebench", *{args!r}]
try:
    from judgebench.cli import main
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = None
with open({out!r}, "w") as f:
    json.dump({{"code": code, "modules": sorted(sys.modules)}}, f)
"""


def _loaded(args: list[str], tmp_path: Path, prelude: str = "") -> tuple[set[str], str]:
    """The modules a fresh `judgebench ARGS` has imported when it exits, and what it printed."""
    out = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(prelude=prelude, args=args, out=str(out))],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())
    assert found["code"] in (0, None), (found["code"], done.stderr)
    return set(found["modules"]), done.stdout


def _has(modules: set[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def _heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in HEAVY if _has(modules, name))


@pytest.mark.parametrize(
    "args",
    [["--help"], ["report", "--help"], ["bbe", "--help"], ["run", "--help"], ["data", "show", "--help"]],
)
def test_help_loads_no_heavy_library(args: list[str], tmp_path: Path) -> None:
    modules, shown = _loaded(args, tmp_path)
    assert "Usage" in shown  # the help was rendered (through typer's rich formatter)
    assert "judgebench.cli.helptext" in modules and "typer.rich_utils" in modules
    assert _heavy(modules) == []
    # nor our pydantic record models (building them all cost --help ~0.06 s): the consoles need
    # records.sanitize only
    records_loaded = sorted(m for m in modules if m.startswith("judgebench.records."))
    assert records_loaded == ["judgebench.records.sanitize"]


# `import --help` lists the importer registry (plugins included), so it loads the importers and the
# records they build; `import llmbar-results --help` names one command and stays light
@pytest.mark.parametrize("args", [["--help"], ["report", "--help"], ["import", "llmbar-results", "--help"]])
def test_help_loads_no_pydantic(args: list[str], tmp_path: Path) -> None:
    """No help page loads pydantic: the CLI tells a ValidationError without importing it, and a
    help flag not given is not coerced (typer 0.29 would build a pydantic adapter for it)."""
    modules, _ = _loaded(args, tmp_path)
    assert "pydantic" not in modules and "pydantic_core" not in modules


def test_the_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    """The other side: a library imported before `--help` runs is reported, so the check above can
    fail; and a command that does its work loads the library API it calls."""
    modules, _ = _loaded(["--help"], tmp_path, prelude="import numpy, pydantic")
    assert _heavy(modules) == ["numpy"] and "pydantic" in modules
    modules, shown = _loaded(["data", "list"], tmp_path)
    assert "llmbar" in shown
    assert "judgebench.api" in _heavy(modules)


def test_records_load_their_models_on_first_use() -> None:
    """records/__init__ names its models lazily (so that records.sanitize stays light); each name
    is the very class its submodule defines, and an unknown name is an AttributeError."""
    assert records.Judgment is judgments.Judgment
    for name in records.__all__:
        assert getattr(records, name) is not None, name
    assert set(records.__all__) <= set(dir(records))
    with pytest.raises(AttributeError, match="NoSuchRecord"):
        _ = records.NoSuchRecord  # type: ignore[attr-defined]


_EVERY_HELP = [
    [*command.split(), "--help"]
    for command in (
        "report", "bbe", "run", "judge", "translate", "plan", "selftest", "compare", "data", "data show",
        "data list", "import", "import llmbar-results", "cache", "cache info", "cache clear",
    )
]  # fmt: skip
_MISTAKES = [
    ["--help"],  # the command list
    [],  # the same, as no_args_is_help prints it
    ["report", "--bogus"],
    ["bbe", "--tau", "x"],
    ["data", "nosuch"],
    ["reprot"],
    ["report", "--run", "/nonexistent/run"],
    ["report", "--run"],
    ["--version"],
]


def _main_says(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[object, str, str]:
    monkeypatch.setattr(sys, "argv", ["judgebench", *args])
    with pytest.raises(SystemExit) as exited:
        cli_app.main()
    out, err = capsys.readouterr()
    return exited.value.code, out, err


@pytest.mark.parametrize("args", [*_EVERY_HELP, *_MISTAKES], ids=" ".join)
def test_the_app_built_for_one_command_says_what_the_whole_app_says(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """main() builds only the command its arguments name (Typer builds every command it holds before
    parsing a flag), and for the command list commands without flags: each help page, usage error and
    error is the one the whole app gives."""
    monkeypatch.setenv("COLUMNS", "100")
    built_for = cli_app.for_args(args)
    one = _main_says(args, capsys, monkeypatch)
    monkeypatch.setattr(cli_app, "for_args", lambda _: cli_app.app)
    whole = _main_says(args, capsys, monkeypatch)
    assert one == whole
    assert one[1] or one[2]  # something was said
    names = {info.name for info in (*cli_app.app.registered_commands, *cli_app.app.registered_groups)}
    assert (built_for is not cli_app.app) == (args in ([], ["--help"]) or args[0] in names)


def test_the_app_built_for_one_command_holds_it_alone() -> None:
    whole = cli_app.app
    counts = (len(whole.registered_commands), len(whole.registered_groups))
    report = cli_app.for_args(["report", "--help"])
    assert [info.name for info in report.registered_commands] == ["report"] and report.registered_groups == []
    data = cli_app.for_args(["data", "show", "--help"])
    assert data.registered_commands == [] and [info.name for info in data.registered_groups] == ["data"]
    assert report.registered_callback is whole.registered_callback and report.info is whole.info
    assert cli_app.for_args(["--version"]) is whole and cli_app.for_args(["reprot"]) is whole
    assert (len(whole.registered_commands), len(whole.registered_groups)) == counts  # left as it was


def test_the_command_list_builds_no_flags() -> None:
    """`judgebench --help` gets every command and group as registered, each command's callback one
    without parameters that refuses to run; the app's own callback (--version) and the whole app's
    callbacks stay as they are."""
    whole, listing = cli_app.app, cli_app.for_args(["--help"])
    assert listing.registered_callback is whole.registered_callback

    def pairs(a: typer.Typer, b: typer.Typer) -> list[tuple[Any, Any]]:
        found = list(zip(a.registered_commands, b.registered_commands, strict=True))
        for ga, gb in zip(a.registered_groups, b.registered_groups, strict=True):
            assert ga.typer_instance is not None and gb.typer_instance is not None
            assert ga.name == gb.name and ga.typer_instance is not gb.typer_instance
            found += pairs(ga.typer_instance, gb.typer_instance)
        return found

    listed = pairs(whole, listing)
    assert len(listed) >= 13
    assert sum(len(inspect.signature(real.callback).parameters) for real, _ in listed) > 50  # untouched
    for real, entry in listed:
        assert (entry.name, entry.short_help, entry.help) == (real.name, real.short_help, real.help)
        assert inspect.signature(entry.callback).parameters == {}
        assert inspect.getdoc(entry.callback) == inspect.getdoc(real.callback)
        assert entry.callback is not real.callback
        with pytest.raises(AssertionError, match="command list"):
            entry.callback()
