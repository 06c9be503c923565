"""Progress of a long model run, counted here and shown by whoever listens: done/total, rate, tokens,
cost and ETA, and a stage's expected time said before its first call and corrected once.

`ProgressReporter` draws nothing. While enabled, its start, each advance, each line it has to say and
its stop are records on the `judgebench.progress` logger (INFO, carrying the reporter as
`record.progress`), so the library never writes to a terminal: the CLI listens and draws a bar on a
terminal or, off one, plain lines at a steady interval (`cli/progress_view.py`); a notebook or
another program adds its own handler.
"""

from __future__ import annotations

import logging
import time
from typing import Literal

PROGRESS_LOGGER = "judgebench.progress"
_log = logging.getLogger(PROGRESS_LOGGER)

Event = Literal["start", "advance", "say", "stop"]


class ProgressReporter:
    """`with ProgressReporter(total, "judge gpt41mini") as p: ... p.advance(result)`.

    `enabled`: None lets the listener decide (the CLI: a bar only on a terminal), True asks for a bar
    wherever, False keeps the reporter silent (it still counts)."""

    def __init__(
        self,
        total: int,
        description: str = "calls",
        *,
        enabled: bool | None = None,
        expected: tuple[float, str] | None = None,
    ) -> None:
        self.total = total
        self.description = description
        self.enabled = enabled
        # (seconds, the line saying so): said before the first call, then corrected once with the
        # rate of the first calls (costing/durations.py)
        self.expected = expected
        self._corrected = False
        self._checkpoint = min(max(3, total // 20), max(1, total - 1))
        self._paid = 0  # calls not answered by the cache: the ones whose pace is the rate
        self.started = time.monotonic()
        self.done = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.cached = 0
        self.failed = 0

    def _emit(self, event: Event, line: str | None = None) -> None:
        if self.enabled is not False and _log.isEnabledFor(logging.INFO):
            extra = {"progress": self, "progress_event": event, "progress_line": line}
            _log.info("%s", line or self.description, extra=extra)

    def __enter__(self) -> ProgressReporter:
        self.started = time.monotonic()
        self._emit("start")
        if self.expected is not None and self.total:
            self._emit("say", self.expected[1])
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
        self._paid += 0 if cached else n
        if self.expected is not None and not self._corrected and self._paid >= self._checkpoint:
            self._corrected = True
            self._emit("say", self.correction())
        self._emit("advance")

    def drop(self, n: int) -> None:
        """`n` calls counted in the total that will not be made (bbe's fresh check of a calibration
        with no release): the total shrinks, so a finished stage does not look cut short."""
        if n > 0:
            self.total = max(self.done, self.total - n)
            self._emit("advance")

    def correction(self) -> str:
        """`judge local: 12 of 240 calls in 31s: about 9m50s left at that pace (expected 2m46s in all)`."""
        elapsed = time.monotonic() - self.started
        left = (self.total - self.done) * elapsed / max(self._paid, 1)
        expected = f" (expected {clock(self.expected[0])} in all)" if self.expected is not None else ""
        return (
            f"{self.description}: {self.done:,} of {self.total:,} in {clock(elapsed)}: {about(left)} "
            f"left at that pace{expected}"
        )

    def line(self) -> str:
        """`judge local: 120/240 calls, 1.3/s, ETA 1m32s, 84,000 tok, $0.0000` (the plain form)."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else None
        eta = "?" if left is None else f"{int(left) // 60}m{int(left) % 60:02d}s"
        cost = "unpriced" if self.cost is None else f"${self.cost:,.4f}"
        extra = "".join(
            f", {count} {what}" for count, what in ((self.cached, "cached"), (self.failed, "failed")) if count
        )
        late = ""
        if self.expected is not None and self.done < self.total and elapsed > self.expected[0]:
            late = f", past the expected {clock(self.expected[0])}"
        return (
            f"{self.description}: {self.done:,}/{self.total:,} calls, {rate:.1f}/s, ETA {eta}, "
            f"{self.tokens:,} tok, {cost}{extra}, {clock(elapsed)} so far{late}"
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
