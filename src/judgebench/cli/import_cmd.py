"""CLI for `judgebench import`: bring published results into a run as judgments."""

from __future__ import annotations

from typing import Annotated

import typer

from judgebench.cli.app import RunOpt, app, console, handle_errors

import_app = typer.Typer(
    name="import",
    help="Import published results into a run as judgments (then run `judgebench report`).",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


@import_app.command("llmbar-results")
@handle_errors
def llmbar_results(
    run: RunOpt,
    data_dir: Annotated[
        str, typer.Option("--data-dir", help="Local LLMBar copy (the folder that holds Dataset/).")
    ],
    evaluator: Annotated[
        str, typer.Option("--evaluator", help="Published evaluator/strategy, e.g. GPT-4/Vanilla.")
    ],
) -> None:
    """Turn LLMBar's published per-item verdicts (result.json) into `en` pair judgments of judge NAME."""
    from judgebench.analysis.llmbar_import import import_llmbar_results
    from judgebench.rundir import RunDir, safe_run_path

    summary = import_llmbar_results(RunDir(safe_run_path(run)), data_dir, evaluator)
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
