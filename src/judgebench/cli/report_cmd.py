"""CLI for `judgebench report` (placeholder until its issue lands; it exits non-zero)."""

from __future__ import annotations

import typer

from judgebench.cli.app import app, err_console


@app.command("report", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def report_command() -> None:
    """Not implemented yet."""
    err_console.print("error: 'judgebench report' is not implemented yet")
    raise typer.Exit(code=2)
