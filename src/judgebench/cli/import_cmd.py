"""CLI for `judgebench import`: bring published results into a run as judgments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from judgebench.cli import options as opt
from judgebench.cli.app import app, console, handle_errors

if TYPE_CHECKING:
    from judgebench.api import ImportSummary

import_app = typer.Typer(
    name="import",
    help="Import published results into a run as judgments (then run `judgebench report`).",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


@import_app.command("llmbar-results")
@handle_errors
def llmbar_results(
    run: opt.RunOpt,
    data_dir: Annotated[
        str, typer.Option("--data-dir", help="Local LLMBar copy (the folder that holds Dataset/).")
    ],
    evaluator: Annotated[
        list[str],
        typer.Option(
            "--evaluator",
            metavar="EVALUATOR",
            help="Published evaluator/strategy, e.g. GPT-4/Vanilla; repeat for several.",
        ),
    ],
    wait_lock: opt.WaitLockOpt = False,
) -> None:
    """Turn LLMBar's published per-item verdicts (result.json) into `en` pair judgments, one judge per
    --evaluator (named as given, e.g. GPT-4/Vanilla)."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    for name in dict.fromkeys(evaluator):  # each once, in the order given
        _import_one(api.import_llmbar_results(run, data_dir, name, wait_lock=wait_lock), run)


def _import_one(summary: ImportSummary, run: str) -> None:
    subsets = ", ".join(f"{name} {count}" for name, count in summary.subsets.items())
    console.print(
        f"imported {summary.judgments} judgments of '{summary.judge}' ({subsets}); "
        f"{summary.appended} new lines, {summary.invalid} invalid (null winner) -> {run}/judgments.jsonl",
        highlight=False,
        soft_wrap=True,
    )
    if summary.missing_subsets:
        console.print(
            f"no result.json for: {', '.join(summary.missing_subsets)}", style="yellow", highlight=False
        )
