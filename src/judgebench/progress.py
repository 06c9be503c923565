"""A progress bar for long model runs: done/total, rate, tokens, cost and ETA on stderr.

When stderr is not a terminal (CI, pipes, nohup, log files) and nobody chose, a plain line at a steady
interval instead (`JUDGEBENCH_PROGRESS_SECONDS`, default 30): logs hold no control codes, and a long
run is not silent until its end.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

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


class ProgressReporter:
    """`with ProgressReporter(total, "judge gpt41mini") as p: ... p.advance(result)`."""

    def __init__(
        self,
        total: int,
        description: str = "calls",
        *,
        enabled: bool | None = None,
        console: Console | None = None,
        expected: tuple[float, str] | None = None,
    ) -> None:
        self.total = total
        self.description = description
        # (seconds, the line saying so): printed before the first call, then corrected once with the
        # rate of the first calls (api/durations.py)
        self.expected = expected
        self._corrected = False
        self._checkpoint = min(max(3, total // 20), max(1, total - 1))
        self._paid = 0  # calls not answered by the cache: the ones whose pace is the rate
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        # off a terminal with nobody choosing: plain lines every `interval` seconds
        self.interval = _interval() if enabled is None and not self.enabled else None
        self._started = self._last_line = time.monotonic()
        self.done = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.cached = 0
        self.failed = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if self.enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                _AccountColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console or Console(stderr=True, emoji=False),
                transient=False,
            )

    def _say(self, line: str) -> None:
        if self._progress is not None:
            self._progress.console.print(line, highlight=False, markup=False, soft_wrap=True)
        elif self.enabled or self.interval is not None:
            print(line, file=sys.stderr, flush=True)

    def __enter__(self) -> ProgressReporter:
        self._started = self._last_line = time.monotonic()
        if self.expected is not None and self.total:
            self._say(self.expected[1])
        if self._progress is not None:
            self._progress.start()
            # the description (a judge's name) is outside text: shown as is, never read as markup
            self._task = self._progress.add_task(escape(self.description), total=self.total, **self._fields())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def _fields(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "cost": self.cost, "cached": self.cached, "failed": self.failed}

    def advance(
        self,
        n: int = 1,
        *,
        tokens: int = 0,
        cost: float | None = 0.0,
        cached: bool = False,
        failed: bool = False,
    ) -> None:
        """Count `n` finished calls; an unknown cost (None) makes the running total unknown."""
        self.done += n
        self.tokens += tokens
        if cost is None or self.cost is None:
            self.cost = None
        else:
            self.cost += cost
        self.cached += int(cached)
        self.failed += int(failed)
        self._paid += 0 if cached else n
        if self.expected is not None and not self._corrected and self._paid >= self._checkpoint:
            self._corrected = True
            self._say(self.correction())
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=n, **self._fields())
        elif self.interval is not None and time.monotonic() - self._last_line >= self.interval:
            self._last_line = time.monotonic()
            print(self.line(), file=sys.stderr, flush=True)

    def correction(self) -> str:
        """`judge local: 12 of 240 calls in 31s: about 9m50s left at that pace (expected 2m46s in all)`."""
        elapsed = time.monotonic() - self._started
        left = (self.total - self.done) * elapsed / max(self._paid, 1)
        expected = f" (expected {clock(self.expected[0])} in all)" if self.expected is not None else ""
        return (
            f"{self.description}: {self.done:,} of {self.total:,} in {clock(elapsed)}: {about(left)} "
            f"left at that pace{expected}"
        )

    def line(self) -> str:
        """`judge local: 120/240 calls, 1.3/s, ETA 1m32s, 84,000 tok, $0.0000` (the plain form)."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = "?" if left is None else f"{int(left) // 60}m{int(left) % 60:02d}s"
        cost = "unpriced" if self.cost is None else f"${self.cost:,.4f}"
        extra = "".join(
            f", {count} {what}" for count, what in ((self.cached, "cached"), (self.failed, "failed")) if count
        )
        return (
            f"{self.description}: {self.done:,}/{self.total:,} calls, {rate:.1f}/s, ETA {eta}, "
            f"{self.tokens:,} tok, {cost}{extra}"
        )


def clock(seconds: float) -> str:
    """`2m46s`, `1h05m`, `40s`: a duration as a person reads it."""
    s = round(seconds)
    if s < 1:
        return "<1s"
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def about(seconds: float) -> str:
    """`about 2m46s`, or `under a second`."""
    return "under a second" if round(seconds) < 1 else f"about {clock(seconds)}"


def _interval() -> float:
    try:
        return max(0.0, float(os.environ.get("JUDGEBENCH_PROGRESS_SECONDS", "30")))
    except ValueError:
        return 30.0
