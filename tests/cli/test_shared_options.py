"""Each setting declared once (issue 42): a flag that two commands take is one `typer.Option(...)`,
in cli/shared_options.py when the commands live in different modules, and every command that takes
it gets the same type, placeholder and limits. A flag whose name two commands give to different
settings is listed below with what differs, and the test checks that it really differs."""

from __future__ import annotations

import collections
import re
import typing
from pathlib import Path

import pytest
from typer._click import Context
from typer.main import get_command

from judgebench import cli
from judgebench.cli import app

CLI = Path(cli.__file__).resolve().parent
SHARED = "shared_options.py"

# flag -> {module whose flag of that name is another setting: what it is there}
OWN_MEANING = {
    "--alpha": {
        "bbe_cmd.py": "the shrinkage, auto or a number",
        "selective_cmd.py": "the disagreement with humans tolerated, a share",
    },
    "--confidence": {"selective_cmd.py": "where a judge's confidence comes from, not an interval's level"},
    "--delta": {"selective_cmd.py": "the failure probability of selective's guarantee, not A-BB's"},
    "--gate": {
        "compare_cmd.py": "a flip-rate limit",
        "report_cmd.py": "the readiness gate, plain or strict",
    },
    "--human": {"import_cmd.py": "a peer's own human-judgment files, several, not judgebench's labels"},
    "--items": {
        "plan_cmd.py": "items judged per condition, for the label budget",
        "run_cmd.py": "the self-test's synthetic items",
    },
    "--out": {"bbe_cmd.py": "the bbe.json file, where compare's and selective's is a folder"},
}


def _commands() -> list[tuple[str, typing.Any]]:
    """Every command (the import formats too, which the group builds when asked), with its path."""
    found: list[tuple[str, typing.Any]] = []

    def walk(path: list[str], command: typing.Any) -> None:
        if hasattr(command, "list_commands"):
            ctx = Context(command)
            for name in command.list_commands(ctx):
                walk([*path, name], command.get_command(ctx, name))
        else:
            found.append((" ".join(path), command))

    walk([], get_command(app))
    return found


def _users() -> dict[str, list[tuple[str, str, typing.Any]]]:
    """flag -> [(command, module file, option)] for every option but --help."""
    users: dict[str, list[tuple[str, str, typing.Any]]] = collections.defaultdict(list)
    for name, command in _commands():
        module = command.callback.__module__.rsplit(".", 1)[-1] + ".py"
        for param in command.params:
            if param.param_type_name == "option" and param.opts != ["--help"]:
                users[param.opts[0]].append((name, module, param))
    return users


USERS = _users()
SHARED_FLAGS = sorted(flag for flag, used in USERS.items() if len(used) > 1)


def _declarations(flag: str) -> list[str]:
    """The modules of cli/ that spell `typer.Option("FLAG"`, once per declaration."""
    pattern = re.compile(r'typer\.Option\(\s*"' + re.escape(flag) + '"')
    return sorted(p.name for p in CLI.glob("*.py") for _ in pattern.finditer(p.read_text()))


def _setting(param: typing.Any) -> tuple[str, typing.Any, typing.Any, typing.Any]:
    """What a flag's setting is: the type of one value (a repeatable flag's too), the placeholder, the
    limits. Whether it is required, its default and its help wording may differ by command."""
    annotation = param.type_descriptor.annotation
    if typing.get_origin(annotation) is list:
        annotation = typing.get_args(annotation)[0]
    return str(annotation), param.metavar, param.min, param.max


def test_the_cli_has_flags_of_several_commands_to_check() -> None:
    # the walk reaches the registry-built import formats and the shared model flags
    assert {"--run", "--model", "--data-dir", "--batch", "--no-cache", "--max-cost"} <= set(SHARED_FLAGS)
    assert any(command.startswith("import ") and command != "import llmbar-results"
               for command, _, _ in USERS["--run"])  # fmt: skip


@pytest.mark.parametrize("flag", SHARED_FLAGS)
def test_a_flag_of_several_commands_is_declared_once(flag: str) -> None:
    own = OWN_MEANING.get(flag, {})
    sharing = [(command, module, param) for command, module, param in USERS[flag] if module not in own]
    declared = _declarations(flag)
    assert set(own) <= set(declared), f"{flag}: {set(own) - set(declared)} no longer declares its own"
    for module in own:
        declared.remove(module)
    modules = {module for _, module, _ in sharing}
    if len(sharing) > 1:
        where = [SHARED] if len(modules) > 1 else sorted(modules)
        assert declared == where, f"{flag} of {sorted(c for c, _, _ in sharing)} is declared in {declared}"
        settings = {command: _setting(param) for command, _, param in sharing}
        assert len(set(settings.values())) == 1, f"{flag}: one setting, several types/placeholders {settings}"


@pytest.mark.parametrize("flag", sorted(OWN_MEANING))
def test_a_flag_named_alike_for_another_setting_really_differs(flag: str) -> None:
    by_module = collections.defaultdict(set)
    for _, module, param in USERS[flag]:
        by_module[module].add(_setting(param))
    assert len(by_module) > 1, f"{flag}: one module only; drop it from OWN_MEANING"
    for module in OWN_MEANING[flag]:
        others = set().union(*(s for m, s in by_module.items() if m != module))
        assert not by_module[module] & others, f"{flag} in {module} is the same setting as elsewhere"


def test_an_option_that_takes_text_or_a_path_declares_its_placeholder() -> None:
    """`metavar=` on the declaration says what goes there (DIR, FILE, MODEL, LIST); cli/helptext.py
    derives a placeholder only for a number (N, X), where Typer would show `<int range>`."""
    bare = sorted(
        f"{command} {flag}"
        for flag, used in USERS.items()
        for command, _, param in used
        if not param.is_flag
        and param.metavar is None
        and param.type_descriptor.annotation not in (int, float)
    )
    assert not bare, f"no metavar= on {bare}"


def test_no_subcommand_offers_shell_completion() -> None:
    """The app turns completion off; a format command of `import` built as its own Typer had it back."""
    assert "--install-completion" not in USERS and "--show-completion" not in USERS
