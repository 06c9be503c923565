"""CLI for `judgebench bbe` (placeholder until its issue lands; it exits non-zero)."""

from __future__ import annotations

import typer

from judgebench.cli.app import app, err_console


@app.command("bbe", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def bbe_command() -> None:
    """Not implemented yet."""
    err_console.print("error: 'judgebench bbe' is not implemented yet")
    raise typer.Exit(code=2)
