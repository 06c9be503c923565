"""The `judgebench` command: a thin Typer layer. Each command module parses flags and calls the
library (`judgebench.api` and the stage packages); no logic lives here."""

from __future__ import annotations

from judgebench.cli import (  # noqa: F401  (each module registers its commands on `app`)
    bbe_cmd,
    cache_cmd,
    data_cmd,
    helptext,
    import_cmd,
    judge_cmd,
    plan_cmd,
    report_cmd,
    run_cmd,
    translate_cmd,
)
from judgebench.cli.app import app, main

helptext.annotate(app)  # examples and one-line summaries, once every command is registered

__all__ = ["app", "main"]
