"""CLI for `judgebench data` (placeholder until its issue lands; it exits non-zero)."""

from __future__ import annotations

import typer

from judgebench.cli.app import app, err_console


@app.command("data", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def data_command() -> None:
    """Not implemented yet."""
    err_console.print("error: 'judgebench data' is not implemented yet")
    raise typer.Exit(code=2)
