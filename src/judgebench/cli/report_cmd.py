"""CLI for `judgebench report`: analyse a run's judgments and write metrics, tables, plots and HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from judgebench.cli import render_report, render_run
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, console, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.errors import ConfigError


class _GateCommand(TyperCommand):
    """`--gate` alone is the plain gate, `--gate strict` the strict one (INTERFACE.md): click options
    cannot take an optional value, so a bare `--gate` is read as `--gate fail` before parsing."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: click's Context (vendored)
        fixed: list[str] = []
        for i, arg in enumerate(args):
            fixed.append(arg)
            following = args[i + 1] if i + 1 < len(args) else None
            if arg == "--gate" and (following is None or following.startswith("-")):
                fixed.append("fail")
        return super().parse_args(ctx, fixed)


def _limit(flag: str, text: str) -> Any:
    return typer.Option(flag, min=0.0, max=1.0, help=text)


@app.command("report", cls=_GateCommand)
@handle_errors
def report_command(
    run: opt.RunOpt,
    bootstrap: Annotated[
        int | None,
        typer.Option(
            "--bootstrap",
            min=0,
            help="Item-clustered bootstrap replicates (0 turns it off). \\[default: 1000]",
        ),
    ] = None,
    seed: opt.ReportSeedOpt = None,
    confidence: opt.ReportConfidenceOpt = None,
    max_flip_rate: Annotated[
        float | None,
        typer.Option(
            "--max-flip-rate",
            min=0.0,
            max=1.0,
            help="Readiness: fail when the flip rate's lower bound is above this. \\[default: 0.15]",
        ),
    ] = None,
    max_position_increase: Annotated[
        float | None,
        typer.Option(
            "--max-position-increase",
            min=0.0,
            max=1.0,
            help="Readiness: limit on position inconsistency, target minus en. \\[default: 0.05]",
        ),
    ] = None,
    min_items: Annotated[
        int | None,
        typer.Option(
            "--min-items",
            min=1,
            help="Readiness and probes: a check on fewer items never passes (it may still fail). "
            "\\[default: 20]",
        ),
    ] = None,
    min_effect: Annotated[
        float | None,
        typer.Option(
            "--min-effect",
            min=0.0,
            max=1.0,
            help="Flag a test 'underpowered' when its 80%-power detectable effect exceeds this. "
            "\\[default: 0.05]",
        ),
    ] = None,
    max_position_inconsistency: Annotated[
        float | None,
        _limit(
            "--max-position-inconsistency",
            "Readiness baseline: limit on en position inconsistency. \\[default: 0.20]",
        ),
    ] = None,
    max_invalid_rate: Annotated[
        float | None,
        _limit("--max-invalid-rate", "Readiness baseline: limit on en invalid answers. \\[default: 0.20]"),
    ] = None,
    max_answer_share: Annotated[
        float | None,
        _limit(
            "--max-answer-share",
            "Readiness baseline: one raw answer this often is degenerate. \\[default: 0.95]",
        ),
    ] = None,
    chance: Annotated[
        float | None,
        _limit("--chance", "Readiness baseline: the chance level of en accuracy. \\[default: 0.5]"),
    ] = None,
    no_html: Annotated[
        bool, typer.Option("--no-html", help="Skip report.html (and its plots' embedding).")
    ] = False,
    gate: Annotated[
        str | None,
        typer.Option(
            "--gate",
            metavar="[strict]",
            help="CI gate: exit 4 when a verdict is fail; `--gate strict` also exits 5 on an incomplete "
            "run or an inconclusive verdict.",
        ),
    ] = None,
    export_unstable: Annotated[
        Path | None,
        typer.Option(
            "--export-unstable",
            metavar="FILE",
            dir_okay=False,
            help="Also write the flipped / position-inconsistent items (item x judge: texts, every "
            "verdict and raw answer, audit flags) to FILE as JSONL for human review.",
        ),
    ] = None,
    explorer: Annotated[
        str,
        typer.Option(
            "--explorer",
            metavar="[auto|all]",
            help="Rows of the item explorer in report.html: auto = every item x judge row up to 5,000, "
            "past that the ones that matter (unstable, wrong in en only, audit-flagged); all = every row "
            "(a large page on a large run).",
        ),
    ] = "auto",
    human: opt.ReportHumanOpt = None,
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
        "min_items": min_items,
        "min_detectable_effect": min_effect,
        "max_position_inconsistency": max_position_inconsistency,
        "max_invalid_rate": max_invalid_rate,
        "max_answer_share": max_answer_share,
        "chance": chance,
    }
    if explorer not in ("auto", "all"):
        raise ConfigError(f"--explorer {explorer}: give auto or all")
    if gate not in (None, "fail", "strict"):
        raise ConfigError(f"--gate {gate}: give --gate alone, or --gate strict")
    settings = {k: v for k, v in overrides.items() if v is not None}
    given = {
        "settings": settings,
        "html": not no_html,
        "export_unstable": export_unstable,
        "explorer": explorer,
        "wait_lock": wait_lock,
        "human": human,
    }
    request = api.build_request(api.ReportRequest, None, given)
    result = api.report(run, request)
    render_report.print_report(console, result, export_unstable)
    render_run.readiness_file(result.readiness, str(result.readiness_json))
    if gate is not None:
        outcome = result.readiness.gate(strict=gate == "strict")
        if outcome == "fail":
            raise typer.Exit(code=ExitCode.GATE_FAIL)
        if outcome == "unsettled":
            raise typer.Exit(code=ExitCode.GATE_UNSETTLED)
