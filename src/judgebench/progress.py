"""Progress of a long model run, counted here and shown by whoever listens: done/total, rate, tokens,
cost and ETA.

`ProgressReporter` draws nothing. While enabled, its start, each advance and its stop are records on
the `judgebench.progress` logger (INFO, carrying the reporter as `record.progress`), so the library
never writes to a terminal: the CLI listens and draws a bar on a terminal or, off one, a plain line at
a steady interval (`cli/progress_view.py`); a notebook or another program adds its own handler.
"""

from __future__ import annotations

import logging
import time
from typing import Literal

PROGRESS_LOGGER = "judgebench.progress"
_log = logging.getLogger(PROGRESS_LOGGER)

Event = Literal["start", "advance", "stop"]


class ProgressReporter:
    """`with ProgressReporter(total, "judge gpt41mini") as p: ... p.advance(result)`.

    `enabled`: None lets the listener decide (the CLI: a bar only on a terminal), True asks for a bar
    wherever, False keeps the reporter silent (it still counts)."""

    def __init__(self, total: int, description: str = "calls", *, enabled: bool | None = None) -> None:
        self.total = total
        self.description = description
        self.enabled = enabled
        self.started = time.monotonic()
        self.done = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.cached = 0
        self.failed = 0

    def _emit(self, event: Event) -> None:
        if self.enabled is not False and _log.isEnabledFor(logging.INFO):
            _log.info("%s", self.description, extra={"progress": self, "progress_event": event})

    def __enter__(self) -> ProgressReporter:
        self._emit("start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._emit("stop")

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
        self._emit("advance")

    def line(self) -> str:
        """`judge local: 120/240 calls, 1.3/s, ETA 1m32s, 84,000 tok, $0.0000` (the plain form)."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = "?" if left is None else f"{int(left) // 60}m{int(left) % 60:02d}s"
        cost = "$?" if self.cost is None else f"${self.cost:,.4f}"
        extra = "".join(
            f", {count} {what}" for count, what in ((self.cached, "cached"), (self.failed, "failed")) if count
        )
        return (
            f"{self.description}: {self.done:,}/{self.total:,} calls, {rate:.1f}/s, ETA {eta}, "
            f"{self.tokens:,} tok, {cost}{extra}"
        )
