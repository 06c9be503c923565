"""The `judgebench` command: a thin Typer layer. Each command module parses flags and calls the
library (`judgebench.api` and the stage packages); no logic lives here."""

from __future__ import annotations

from judgebench.cli.app import app, main
from judgebench.cli import bbe_cmd, data_cmd, judge_cmd, report_cmd, run_cmd, translate_cmd  # noqa: F401

__all__ = ["app", "main"]
