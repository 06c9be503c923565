"""CLI for `judgebench selective`: a cascade of the run's judges (cheapest first, then people) whose
decided items agree with humans at >= 1 - alpha with probability >= 1 - delta, calibrated on the run's
human labels (PROTOCOL §8); a CI gate on the coverage it reaches (exit 4, ExitCode.GATE_FAIL)."""

from __future__ import annotations

from typing import Annotated

import typer

from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, console, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.cli.render_report import print_sections

_FLAGS = {"confidence": "--confidence", "cascade": "--cascade", "split_delta": "--per-stage-delta"}


@app.command("selective")
@handle_errors
def selective_command(
    run: opt.JudgedRunOpt,
    cascade: Annotated[
        str,
        typer.Option(
            "--cascade",
            metavar="J1,J2,...",
            help="The run's judges in cost order, cheapest first, comma-separated.",
        ),
    ],
    human: opt.SelectiveHumanOpt,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.001, max=0.999, help="Disagreement with humans tolerated.")
    ] = 0.15,
    delta: Annotated[
        float, typer.Option("--delta", min=0.001, max=0.999, help="Probability the guarantee may fail.")
    ] = 0.1,
    confidence: Annotated[
        str,
        typer.Option(
            "--confidence",
            metavar="SOURCE",
            help="Where a judge's confidence comes from, one of: probability (its verdict "
            "probabilities), agreement (among its answers: orders, repeats), auto (probability where "
            "every answer has them).",
        ),
    ] = "auto",
    min_kept: Annotated[
        int,
        typer.Option("--min-kept", min=1, help="A threshold is tested only if it keeps this many labels."),
    ] = 30,
    per_stage_delta: Annotated[
        bool,
        typer.Option(
            "--per-stage-delta",
            help="Each stage at delta, as the paper (the cascade then holds with 1 - K delta); default: "
            "delta / K per stage, so the cascade holds with 1 - delta.",
        ),
    ] = False,
    min_coverage: Annotated[
        float | None,
        typer.Option(
            "--min-coverage",
            metavar="SHARE",
            min=0.0,
            max=1.0,
            help="CI gate: exit 4 when the judges decide less than SHARE of the items in a condition.",
        ),
    ] = None,
    out: opt.SelectiveOutOpt = None,
) -> None:
    """Judge with a guarantee: calibrate a confidence threshold per judge on the human-labelled items,
    so that the items the judges keep agree with humans at >= 1 - alpha with probability >= 1 - delta;
    the rest go to people (selective.json, selective.md, selective_escalated.jsonl and
    selective_to_label.csv)."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    fields = {
        "human": human,
        "cascade": [j.strip() for j in cascade.split(",") if j.strip()],
        "alpha": alpha,
        "delta": delta,
        "min_kept": min_kept,
        "split_delta": not per_stage_delta,
        "confidence": confidence,
        "min_coverage": min_coverage,
        "out": out,
    }
    request = api.build_request(api.SelectiveRequest, None, fields, flags=_FLAGS)
    result = api.selective(run, request)
    print_sections(console, result.sections)
    if min_coverage is not None:
        if result.gate_failed:
            console.print(
                f"[bold red]GATE FAIL[/]: coverage below {min_coverage:.0%} at the guaranteed level"
            )
        else:
            console.print(
                f"[bold green]GATE PASS[/]: coverage at least {min_coverage:.0%} at the guaranteed level"
            )
    console.print("[bold]Wrote[/]:")
    for path in result.files:
        console.print(f"  {path}", highlight=False, soft_wrap=True, markup=False)
    if result.gate_failed:
        raise typer.Exit(code=ExitCode.GATE_FAIL)
