"""Help pages a user can read at 80 columns: placeholders (`--run DIR`, `--limit N`), not Python
types (`<str>`, `<int range> [x>=1]`, `<bool>` on an on/off flag); the choices of a fixed-value
option (`--verify-kind KIND`, `--batch-failed [resubmit|live]`); option names never cut; one example
per command.

What Typer does itself is used: an option's placeholder is its own `metavar=` (declared once with the
option: cli/shared_options.py for the flags of several commands), and the examples are each
command's `epilog` (`annotate`). `install` keeps a hook only where Typer has no setting:

- `placeholder`: the placeholder of an option declared without `metavar=` comes from its type (N
  for an int, X for a float) and an on/off flag shows none; Typer would show `<int range>`,
  `<float>` and `<bool>`.
- the range text: Typer appends `[x>=1]` to the placeholder column of any option with `min=`/`max=`
  and has no setting to leave it out (the help text states limits where they matter).
- an argument's type column: Typer ignores an argument's `metavar=` there and shows `<str>`; the
  argument's name (SPEC) already says what goes there.
- `_HelpTable`: Typer builds its options table itself; only this keeps the name and placeholder
  columns from being cut (`--max-position-inconsisten…`) at 80 columns.
- `_process_value`: the help flag's, which keeps pydantic out of every command's --help
  (docs/performance.md has the figures)."""

from __future__ import annotations

import inspect
from typing import Any

import typer.core
import typer.rich_utils
from rich.table import Table

from judgebench.config import defaults

# placeholders of options declared without metavar=, by their type
_BY_TYPE = {
    "int": "N",
    "int range": "N",
    "float": "X",
    "float range": "X",
}


def placeholder(param: Any, ctx: Any) -> str | None:
    if param.metavar is not None:
        return str(param.metavar)
    if getattr(param, "is_flag", False):
        return None  # an on/off flag takes no value
    label = str(_ORIGINAL(param, ctx)).strip("<>")
    return _BY_TYPE.get(label, label.upper())


_ORIGINAL = typer.core.TyperOption.display_type


class _HelpTable(Table):
    """Typer's options table whose name and placeholder columns never wrap or shrink: rich shares a
    narrow terminal out among the columns and would cut `--max-position-inconsistency` to
    `--max-position-inconsisten…`; the help text, the last column, wraps instead."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*renderables, **kwargs)
        for column in self.columns[:-1]:
            column.no_wrap = True


_PROCESS_VALUE = typer.core.TyperOption.process_value


def _process_value(self: Any, ctx: Any, value: Any) -> Any:
    """A help flag not given is left alone: typer would coerce its None through a pydantic adapter
    built for the purpose, which costs `judgebench report --help` ~0.1 s of pydantic for a value no
    one reads (the flag exposes none; its callback acts on a true value only)."""
    if value is None and not self.expose_value and self.name == "help":
        return None
    return _PROCESS_VALUE(self, ctx, value)


def install() -> None:
    """Once, when the CLI loads: Typer renders options through these hooks."""
    typer.rich_utils.Table = _HelpTable  # type: ignore[attr-defined]
    typer.core.TyperOption.display_type_rich = placeholder  # type: ignore[method-assign,assignment]
    typer.core.TyperOption._get_number_range_help_str = lambda self: None  # type: ignore[method-assign]
    # an argument shows its name (SPEC); its Python type (<str>) says nothing more
    typer.core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
    typer.core.TyperOption.process_value = _process_value  # type: ignore[method-assign]


# One example per command, shown under its options (lines of at most 76 characters, so that a
# terminal of 80 columns shows each as one line; a continued line is indented).
EXAMPLES = {
    "run": ["judgebench run", "judgebench run --dataset llmbar --data-dir ~/llmbar \\",
            "    --model openai:gpt-4.1-mini --dry-run"],
    "translate": ["judgebench translate --run runs/llmbar --dataset llmbar \\",
                  "    --data-dir ~/llmbar --translator openai:gpt-4.1-mini --dry-run"],
    "judge": ["judgebench judge --run runs/llmbar --model openai:gpt-4.1-mini --dry-run",
              "judgebench judge --run runs/new --dataset llmbar --conditions en,zh,ls \\",
              "    --model openai:gpt-4.1-mini --dry-run"],
    "report": ["judgebench report --run runs/llmbar", "judgebench report --run runs/llmbar --gate strict"],
    "bbe": [f"judgebench bbe --tau {defaults.TAU:g} --delta {defaults.DELTA:g} --run runs/llmbar "
            "--alpha auto"],
    "plan": ["judgebench plan --model openai:gpt-4.1-mini --dataset llmbar --rpm 500"],
    "selftest": ["judgebench selftest"],
    "compare": [f"judgebench compare runs/judge-v1 runs/judge-v2 --gate {defaults.COMPARE_GATE_FLIP_RATE:g}"],
    "selective": ["judgebench selective --run runs/llmbar --human labels.csv \\",
                  "    --cascade local,openai:gpt-4.1-mini --alpha 0.15 --delta 0.1"],
    "show": ["judgebench data show llmbar --data-dir ~/llmbar --json",
             "judgebench data show my_pairs.jsonl --field instruction=question"],
    "list": ["judgebench data list"],
    "llmbar-results": ["judgebench import llmbar-results --run runs/gpt4 \\",
                       "    --data-dir ~/llmbar --evaluator GPT-4/Vanilla"],
    "info": ["judgebench cache info"],
    "clear": ["judgebench cache clear --model openai:gpt-4.1-mini"],
}  # fmt: skip


def _first_paragraph(info: Any) -> str:
    text = info.help or inspect.getdoc(info.callback) or ""
    return " ".join(text.split("\n\n")[0].split())


def annotate(app: typer.Typer) -> None:
    """After every command is registered: each gets its example (an epilog) and a one-line summary
    for the command list, where rich would otherwise keep the docstring's line breaks mid-sentence."""
    for info in app.registered_commands:
        name = info.name or ""
        if name in EXAMPLES and info.epilog is None:
            lines = "\n".join(EXAMPLES[name])  # read as rich markup: no square brackets in them
            info.epilog = f"Example{'s' if len(EXAMPLES[name]) > 1 else ''}:\n{lines}"
        if info.short_help is None:
            info.short_help = _first_paragraph(info)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            annotate(group.typer_instance)
