"""Small helpers shared by command modules: run-path checks and dry-run tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.table import Table

from judgebench.api import Estimate
from judgebench.cli.app import console
from judgebench.rundir import safe_run_path


def safe_run(run: str) -> Path:
    """A --run path must not climb out of its folder with '..'."""
    return safe_run_path(run)


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.4f}"


def print_estimates(estimates: Sequence[Estimate]) -> None:
    table = Table(title="dry run: nothing was called")
    for col in ("stage", "model", "calls", "done", "input tok", "output tok", "tokens by", "live", "batch"):
        table.add_column(col, justify="right" if col not in {"stage", "model", "tokens by"} else "left")
    for e in estimates:
        table.add_row(
            e.stage,
            e.model,
            f"{e.calls:,}",
            f"{e.already_done:,}",
            f"{e.input_tokens:,}",
            f"{e.output_tokens:,}",
            e.token_method,
            _usd(e.cost_live_usd),
            _usd(e.cost_batch_usd),
        )
    console.print(table)
