"""The `judgebench` command: a thin Typer layer, and the only code that writes to a terminal. Each
command module parses flags, calls one `judgebench.api` function (it imports nothing else of the
library but records and errors) and renders the typed result (`render*.py`; the library's progress
records and warnings through `progress_view.py` and `app.py`); no logic lives here."""

from __future__ import annotations

from judgebench.cli import (  # noqa: F401  (each module registers its commands on `app`)
    bbe_cmd,
    cache_cmd,
    compare_cmd,
    data_cmd,
    helptext,
    import_cmd,
    judge_cmd,
    plan_cmd,
    report_cmd,
    run_cmd,
    selective_cmd,
    translate_cmd,
)
from judgebench.cli.app import app, main

helptext.annotate(app)  # examples and one-line summaries, once every command is registered

__all__ = ["app", "main"]
