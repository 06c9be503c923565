"""CLI for `judgebench compare RUN_A RUN_B`: the drift between two runs over the same items, and a CI
gate on it (exit 4 when the verdicts changed beyond the limit; ExitCode.GATE_FAIL)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from judgebench.cli import render_compare
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.config import defaults


class _BareGateCommand(TyperCommand):
    """`--gate` alone gates at the default flip-rate limit (INTERFACE.md: `compare RUN_A RUN_B
    [--gate]`): click options cannot take an optional value, so a bare `--gate` gets the default."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: click's Context (vendored)
        fixed: list[str] = []
        for i, arg in enumerate(args):
            fixed.append(arg)
            following = args[i + 1] if i + 1 < len(args) else None
            if arg == "--gate" and (following is None or following.startswith("-")):
                fixed.append(str(defaults.COMPARE_GATE_FLIP_RATE))
        return super().parse_args(ctx, fixed)


@app.command("compare", cls=_BareGateCommand)
@handle_errors
def compare_command(
    run_a: Annotated[Path, typer.Argument(metavar="RUN_A", help="The baseline run folder.")],
    run_b: Annotated[Path, typer.Argument(metavar="RUN_B", help="The run compared with it.")],
    judge_a: Annotated[
        list[str] | None,
        typer.Option(
            "--judge-a", metavar="NAME", help="A judge of RUN_A to compare (repeat; pairs with --judge-b)."
        ),
    ] = None,
    judge_b: Annotated[
        list[str] | None,
        typer.Option(
            "--judge-b", metavar="NAME", help="The judge of RUN_B it is compared with (repeat, same order)."
        ),
    ] = None,
    gate: Annotated[
        float | None,
        typer.Option(
            "--gate",
            metavar="FLIP_RATE",
            min=0.0,
            max=1.0,
            help="CI gate on verdicts that moved: exit 4 when a flip rate between the runs is above "
            "FLIP_RATE with confidence (its interval's lower bound). Not an accuracy gate: measured on "
            "419 items, a 10% limit catches a 2 / 5 / 10-point accuracy drop 0% / 0% / 54% of the time "
            "when 3% of verdicts change between runs of one judge, 2% / 40-73% / 100% at 7.5% (the "
            "compare guide). A row with nothing compared fails. "
            f"--gate alone: {defaults.COMPARE_GATE_FLIP_RATE}.",
        ),
    ] = None,
    gate_mcnemar: Annotated[
        float | None,
        typer.Option(
            "--gate-mcnemar",
            metavar="ALPHA",
            min=0.0,
            max=1.0,
            help="CI gate on accuracy: exit 4 when correctness changed, by a McNemar test with the item "
            "as the unit (exact sign flips per item; BH-adjusted p below ALPHA). Measured on 419 items: "
            "at 0.05 it fails 3.5-4.5% of unchanged judges and catches a 2 / 5 / 10-point drop "
            "26-45% / 87-99% / 100% of the time. Needs gold labels; a row without any fails (no "
            "evidence).",
        ),
    ] = None,
    allow_different_datasets: Annotated[
        bool,
        typer.Option(
            "--allow-different-datasets",
            help="Compare runs whose manifests record different datasets (refused otherwise: their "
            "items differ even where ids coincide); the output says so.",
        ),
    ] = False,
    metrics: Annotated[
        bool,
        typer.Option(
            "--metrics",
            help="Also list every metric declared for compare (accuracy, flip rate, position "
            "inconsistency, answer rates, a plugin's) in each run, from each run's own analysis "
            "(compare.json `metrics`, compare.md); reported, not gated.",
        ),
    ] = False,
    confidence: opt.ConfidenceOpt = defaults.COMPARE_CONFIDENCE,
    out: opt.CompareOutOpt = None,
) -> None:
    """Drift between two runs over the same items (two judge versions, templates or dates): per
    condition the verdicts that changed, the flip rate between the runs with its interval, an
    item-clustered McNemar test on correctness, and the changed units (compare.json, compare.md,
    compare_changed.*). Runs whose manifests record different datasets are refused."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    request = api.CompareRequest(
        judge_a=judge_a or [],
        judge_b=judge_b or [],
        gate=gate,
        gate_mcnemar=gate_mcnemar,
        confidence=confidence,
        out=out,
        allow_different_datasets=allow_different_datasets,
        metrics=metrics,
    )
    result = api.compare_runs(run_a, run_b, request)
    render_compare.comparison(result)
    if result.gate_failed:
        raise typer.Exit(code=ExitCode.GATE_FAIL)
