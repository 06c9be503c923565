"""Write docs/reference/cli.md from the Typer app itself, so the CLI reference never drifts from the
commands: every command and group, its help text, its usage line and every option with its
placeholder, default and help. `tests/cli/test_cli_reference.py` fails when the file is stale.

    python scripts/cli_reference.py          # rewrite docs/reference/cli.md
    python scripts/cli_reference.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import typer.main

from judgebench.cli.helptext import placeholder

OUT = Path(__file__).resolve().parent.parent / "docs" / "reference" / "cli.md"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _is_option(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def _option_row(param: Any, ctx: Any) -> str:
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    metavar = ""
    if _is_option(param) and not param.is_flag:
        metavar = _cell(placeholder(param, ctx) or "")
    default = ""
    if _is_option(param) and param.show_default is not False:
        value = param.default
        if value not in (None, False, (), []) and not callable(value):
            default = _cell(f"`{value}`")
    help_text = _cell(getattr(param, "help", None) or "")
    return f"| {names} | {metavar} | {default} | {help_text} |"


def _command(path: list[str], command: Any, lines: list[str]) -> None:
    ctx = command.context_class(command, info_name=" ".join(path))
    name = " ".join(path)
    lines += [f"## `{name}`", ""]
    if command.help:
        lines += [" ".join(command.help.split("\n\n")[0].split()), ""]
        rest = command.help.split("\n\n")[1:]
        for paragraph in rest:
            lines += [" ".join(paragraph.split()), ""]
    pieces = command.collect_usage_pieces(ctx)
    lines += ["```text", f"{name} {' '.join(pieces)}".rstrip(), "```", ""]
    arguments = [p for p in command.params if getattr(p, "param_type_name", "") == "argument"]
    if arguments:
        lines += ["Arguments: " + ", ".join(f"`{(p.name or '').upper()}`" for p in arguments), ""]
    options = [p for p in command.params if _is_option(p) and not p.hidden]
    if options:
        lines += ["| option | value | default | what it does |", "|---|---|---|---|"]
        lines += [_option_row(p, ctx) for p in options]
        lines.append("")
    if command.epilog:
        lines += ["```", *[line.rstrip() for line in command.epilog.splitlines()[1:]], "```", ""]
    if hasattr(command, "commands"):
        for sub_name in sorted(command.commands):
            _command([*path, sub_name], command.commands[sub_name], lines)


def render() -> str:
    from judgebench.cli import app

    root: Any = typer.main.get_command(app)
    lines = [
        "# Command-line reference",
        "",
        "Generated from the commands themselves by `python scripts/cli_reference.py`; "
        "`judgebench COMMAND --help` prints the same. Exit codes: 0 success; 1 an error the command "
        "names in one line (bad input, a setting or model that cannot work, a missing key); 2 a flag "
        "or flag value the parser refuses; 3 finished with work left undone (failed calls a rerun "
        "retries, an infeasible release); 4 a failed gate; 5 a strict gate on an incomplete run or an "
        "inconclusive verdict; 130 interrupted (everything received is kept).",
        "",
    ]
    for name in sorted(root.commands):
        _command(["judgebench", name], root.commands[name], lines)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
