"""The library's progress records drawn for a person: a rich bar per running reporter on a terminal;
off one (CI, pipes, nohup, log files) and with nobody choosing, a plain line at a steady interval
(`JUDGEBENCH_PROGRESS_SECONDS`, default 30), so logs hold no control codes and a long run is not
silent until its end. The lines a stage says (its expected time, its correction) go above the bar
or among the plain lines."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, cast

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

PROGRESS_LOGGER = "judgebench.progress"  # where the library's ProgressReporter sends its records


class Reporter(Protocol):
    """What a progress record carries (judgebench.progress.ProgressReporter)."""

    total: int
    description: str
    enabled: bool | None
    tokens: int
    cost: float | None
    cached: int
    failed: int
    done: int

    def line(self) -> str: ...


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("  -  /s" if speed is None else f"{speed:5.1f}/s", style="progress.data.speed")


class _AccountColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        f = task.fields
        parts = [f"{f.get('tokens', 0):,} tok"]
        cost = f.get("cost")
        parts.append("unpriced" if cost is None else f"${cost:,.4f}")
        if f.get("cached"):
            parts.append(f"{f['cached']} cached")
        if f.get("failed"):
            parts.append(f"{f['failed']} failed")
        return Text(" ".join(parts))


def _fields(r: Reporter) -> dict[str, Any]:
    return {"tokens": r.tokens, "cost": r.cost, "cached": r.cached, "failed": r.failed}


def _interval() -> float:
    try:
        return max(0.0, float(os.environ.get("JUDGEBENCH_PROGRESS_SECONDS", "30")))
    except ValueError:
        return 30.0


@dataclass
class _Shown:
    bar: Progress | None = None
    task: TaskID | None = None
    interval: float | None = None  # plain lines every this many seconds (None: no plain lines)
    last_line: float = 0.0
    # plain lines also while no call finishes (one embedded-model translation can take minutes):
    # set when the reporter stops
    quiet: threading.Event | None = None


def _heartbeat(r: Reporter, shown: _Shown, interval: float) -> None:
    """A plain line every `interval` seconds without a finished call, until the reporter stops."""
    assert shown.quiet is not None
    while not shown.quiet.wait(min(interval, 1.0)):
        if time.monotonic() - shown.last_line >= interval:
            shown.last_line = time.monotonic()
            print(r.line(), file=sys.stderr, flush=True)


class ProgressView(logging.Handler):
    """A logging handler for `judgebench.progress`: one bar (or plain lines) per reporter."""

    def __init__(self, console: Console | None = None, *, terminal: bool | None = None) -> None:
        super().__init__(level=logging.INFO)
        self.console = console
        self.terminal = terminal  # None: whether stderr is a terminal when a reporter starts
        self._shown: dict[int, _Shown] = {}

    def emit(self, record: logging.LogRecord) -> None:
        reporter = cast("Reporter | None", record.__dict__.get("progress"))
        if reporter is None:
            return
        event = record.__dict__.get("progress_event")
        if event == "start":
            self._start(reporter)
        elif event == "advance":
            self._advance(reporter)
        elif event == "say":
            self._say(reporter, str(record.__dict__.get("progress_line") or ""))
        elif event == "stop":
            shown = self._shown.pop(id(reporter), None)
            if shown is not None and shown.bar is not None:
                shown.bar.stop()
            if shown is not None and shown.quiet is not None:
                shown.quiet.set()

    def _start(self, r: Reporter) -> None:
        terminal = sys.stderr.isatty() if self.terminal is None else self.terminal
        shown = _Shown(last_line=time.monotonic())
        if r.enabled or (r.enabled is None and terminal):
            shown.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                _AccountColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console or Console(stderr=True, emoji=False),
                transient=False,
            )
            shown.bar.start()
            # the description (a judge's name) is outside text: shown as is, never read as markup
            shown.task = shown.bar.add_task(escape(r.description), total=r.total, **_fields(r))
        elif r.enabled is None:
            shown.interval = _interval()
            if shown.interval > 0:
                shown.quiet = threading.Event()
                beat = threading.Thread(target=_heartbeat, args=(r, shown, shown.interval), daemon=True)
                beat.start()
        self._shown[id(r)] = shown

    def _say(self, r: Reporter, line: str) -> None:
        """A line the stage has to say (its expected time, then the correction): above the bar, or
        as a plain line wherever plain lines go."""
        shown = self._shown.get(id(r))
        if shown is None:
            return
        if shown.bar is not None:
            shown.bar.console.print(line, highlight=False, markup=False, soft_wrap=True)
        elif shown.interval is not None:
            print(line, file=sys.stderr, flush=True)

    def _advance(self, r: Reporter) -> None:
        shown = self._shown.get(id(r))
        if shown is None:
            return
        if shown.bar is not None and shown.task is not None:
            shown.bar.update(shown.task, completed=r.done, total=r.total, **_fields(r))
        elif shown.interval is not None and time.monotonic() - shown.last_line >= shown.interval:
            shown.last_line = time.monotonic()
            print(r.line(), file=sys.stderr, flush=True)


@contextmanager
def shown_progress(view: ProgressView | None = None) -> Iterator[ProgressView]:
    """Listen to the library's progress records while a command runs."""
    view = view or ProgressView()
    logger = logging.getLogger(PROGRESS_LOGGER)
    level, propagate = logger.level, logger.propagate
    logger.addHandler(view)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield view
    finally:
        logger.removeHandler(view)
        logger.setLevel(level)
        logger.propagate = propagate
