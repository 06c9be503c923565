"""CLI for `judgebench report`: analyse a run's judgments and write metrics, tables, plots and HTML."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from judgebench.cli import options as opt
from judgebench.cli.app import app, console, handle_errors


@app.command("report")
@handle_errors
def report_command(
    run: opt.RunOpt,
    bootstrap: Annotated[
        int | None,
        typer.Option("--bootstrap", min=0, help="Item-clustered bootstrap replicates (0 turns it off)."),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the bootstrap.")] = None,
    confidence: Annotated[
        float | None,
        typer.Option("--confidence", min=0.5, max=0.999, help="Level of every interval (default 0.95)."),
    ] = None,
    max_flip_rate: Annotated[
        float | None,
        typer.Option(
            "--max-flip-rate",
            min=0.0,
            max=1.0,
            help="Readiness: fail when the flip rate's lower bound is above this (default 0.15).",
        ),
    ] = None,
    max_position_increase: Annotated[
        float | None,
        typer.Option(
            "--max-position-increase",
            min=0.0,
            max=1.0,
            help="Readiness: limit on position inconsistency, target minus en (default 0.05).",
        ),
    ] = None,
    min_effect: Annotated[
        float | None,
        typer.Option(
            "--min-effect",
            min=0.0,
            max=1.0,
            help="Flag a test 'underpowered' when its 80%-power detectable effect exceeds this "
            "(default 0.05).",
        ),
    ] = None,
    no_html: Annotated[
        bool, typer.Option("--no-html", help="Skip report.html (and its plots' embedding).")
    ] = False,
    wait_lock: opt.WaitLockOpt = False,
) -> None:
    """Print the tables (readiness verdict first); write metrics.json/.csv, report.md, report.html."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    overrides: dict[str, Any] = {
        "bootstrap_samples": bootstrap,
        "seed": seed,
        "confidence": confidence,
        "max_flip_rate": max_flip_rate,
        "max_position_increase": max_position_increase,
        "min_detectable_effect": min_effect,
    }
    settings = {k: v for k, v in overrides.items() if v is not None}
    api.report(run, console=console, settings=settings, html=not no_html, wait_lock=wait_lock)
