"""CLI for `judgebench report`: analyse a run's judgments and write metrics, tables, plots and HTML."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from pydantic import ValidationError

from judgebench.cli.app import RunOpt, app, console, handle_errors
from judgebench.errors import ConfigError, RunDirError
from judgebench.rundir import JUDGMENTS, RunDir, safe_run_path


@app.command("report")
@handle_errors
def report_command(
    run: RunOpt,
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
) -> None:
    """Print the tables (readiness verdict first); write metrics.json/.csv, report.md, report.html."""
    from judgebench.analysis import ReportSettings, analyze_run
    from judgebench.report import write_report

    run_dir = RunDir(safe_run_path(run))
    if not run_dir.path.is_dir():
        raise RunDirError(f"run folder {run_dir.path} does not exist")
    run_dir.require(JUDGMENTS, "run `judgebench judge` (or `judgebench import llmbar-results`) first")
    overrides: dict[str, Any] = {
        "bootstrap_samples": bootstrap,
        "seed": seed,
        "confidence": confidence,
        "max_flip_rate": max_flip_rate,
        "max_position_increase": max_position_increase,
        "min_detectable_effect": min_effect,
    }
    try:
        settings = ReportSettings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise ConfigError(f"invalid report settings: {exc.errors()[0]['msg']}") from None
    analysis = analyze_run(run_dir, settings)
    paths = write_report(run_dir, analysis, console, html=not no_html)
    if run_dir.exists():
        run_dir.record_stage(
            "report",
            {
                "settings": settings.model_dump(),
                "records": len(analysis.records),
                "outputs": [str(p) for p in paths.all()],
            },
        )
