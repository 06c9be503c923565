"""Records are stamped in UTC to the second, from the records room (no run-folder import for the time)."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

from judgebench.records.clock import now_iso

SRC = Path(__file__).resolve().parents[2] / "src" / "judgebench"


def test_now_iso_is_utc_to_the_second() -> None:
    stamp = dt.datetime.fromisoformat(now_iso())
    assert stamp.utcoffset() == dt.timedelta(0) and stamp.microsecond == 0
    assert abs((dt.datetime.now(dt.UTC) - stamp).total_seconds()) < 5


def test_only_the_records_room_defines_the_stamp() -> None:
    defining = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if any(
            isinstance(n, ast.FunctionDef) and n.name == "now_iso"
            for n in ast.walk(ast.parse(path.read_text()))
        )
    ]
    assert defining == ["records/clock.py"]
