"""The time a record is stamped with: UTC, to the second, ISO 8601 (`2026-12-03T15:52:00+00:00`).

Why here: judgments, batch states, imports, cache rows and report pages stamp records with it; a room
that only needs the time should not have to import the run folder for it."""

from __future__ import annotations

import datetime as _dt


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
