"""CLI for `judgebench judge` (placeholder until its issue lands; it exits non-zero)."""

from __future__ import annotations

import typer

from judgebench.cli.app import app, err_console


@app.command("judge", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def judge_command() -> None:
    """Not implemented yet."""
    err_console.print("error: 'judgebench judge' is not implemented yet")
    raise typer.Exit(code=2)
