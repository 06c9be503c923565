"""The report's figures drawn by a second process while this one writes the rest of the report.

Why: drawing the figures is a third of a report at LLMBar size (about 2 s of matplotlib on one core),
and the rest of the report (metrics.json, the sections, the item explorer) does not need them. The
worker is started before the run is read, so that its own imports (matplotlib, the report package)
overlap the analysis; it is sent the finished `Analysis` by pickle over its stdin.

The two processes share the figures: a ticket pipe holds one byte per figure (its index in
FIGURE_KEYS, costliest first), the child takes tickets while this process writes the rest, and when
this process needs the figures it takes the tickets left and draws those itself (at 23 languages the
figures alone are 6-8 s of one core, longer than the rest of the writing). A pipe hands each byte to
one reader, so no figure is drawn twice. The child answers on its own pipe (so that nothing a library
prints on stdout can garble it) with its origin, then (key, PNG bytes or None) per ticket: the same
bytes as drawn here (a test compares them).

Whatever goes wrong with it (no second core, the interpreter cannot start, it runs another copy of
judgebench, it fails or dies, also in the middle of a figure), the figures it did not answer are drawn
here: the worker only ever saves time. `JUDGEBENCH_PLOT_WORKER=0` turns it off; a run smaller than
MIN_BYTES of judgments never starts one (a second interpreter costs more than the few figures of a
small run).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import judgebench
from judgebench.report.figures import DRAW_ORDER, FIGURE_KEYS, FigureSet, in_report_order

if TYPE_CHECKING:
    from judgebench.analysis.model import Analysis

ENV = "JUDGEBENCH_PLOT_WORKER"  # "0": always draw in this process
# judgments.jsonl at least this large (about 5,000 judgments of 800 bytes) is worth a second process
MIN_BYTES = 4 << 20
# the child: this process's import path, then `serve` (importing this module imports the figures,
# which is what the child does while the parent analyses); argv[2] is the pipe it answers on,
# argv[3] the ticket pipe
_BOOT = (
    "import json, sys\n"
    "sys.path[:] = json.loads(sys.argv[1])\n"
    "from judgebench.report.plot_worker import serve\n"
    "serve(int(sys.argv[2]), int(sys.argv[3]))\n"
)
# False: this process takes no ticket and waits for the child to draw every figure (for tests)
SHARE = True


def serve(answer_fd: int, ticket_fd: int) -> None:
    """The child: take tickets until none is left, drawing each figure of the analysis its stdin
    sends, and answer each on `answer_fd` as it is drawn."""
    analysis = pickle.load(sys.stdin.buffer)
    figures = FigureSet(analysis)
    with open(answer_fd, "wb") as answer:
        pickle.dump(judgebench.__file__, answer)
        while ticket := os.read(ticket_fd, 1):
            key = FIGURE_KEYS[ticket[0]]
            pickle.dump((key, figures.draw(key)), answer, protocol=pickle.HIGHEST_PROTOCOL)
            answer.flush()  # a figure answered is kept even if the child dies in the next one


class PlotWorker:
    """One child process drawing one report's figures with this one (`send`, then `result`;
    `close` always)."""

    def __init__(self, process: subprocess.Popen[bytes], answer: BinaryIO, tickets: int) -> None:
        self._process = process
        self._answer = answer
        self._tickets = tickets  # this process's read end of the ticket pipe
        self._analysis: Analysis | None = None
        self._threads: list[threading.Thread] = []
        self._answered = b""
        self.drawn_here: list[str] = []  # the figures `result` drew in this process (tickets left, or lost)

    @classmethod
    def start(cls, judgments: Path) -> PlotWorker | None:
        """A worker for a report of `judgments`, or None where it would not pay or cannot start."""
        if os.environ.get(ENV, "1").strip() == "0" or (os.cpu_count() or 1) < 2:
            return None
        try:
            if judgments.stat().st_size < MIN_BYTES:
                return None
            read_end, write_end = os.pipe()
            tickets_read, tickets_write = os.pipe()
        except OSError:
            return None
        # every ticket before the child can read one (it reads the analysis first); then the write
        # end closes, so that an empty pipe reads as "none left" in both processes
        os.write(tickets_write, bytes(FIGURE_KEYS.index(key) for key in DRAW_ORDER))
        os.close(tickets_write)
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(write_end), str(tickets_read)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,  # a failure is drawn again here, where its error shows
                pass_fds=(write_end, tickets_read),
            )
        except (OSError, ValueError):  # no interpreter, or no way to pass it a pipe (Windows)
            os.close(read_end)
            os.close(tickets_read)
            return None
        finally:
            os.close(write_end)  # the child holds it now: its exit ends the answer
        return cls(process, os.fdopen(read_end, "rb"), tickets_read)

    def send(self, analysis: Analysis) -> None:
        """Hand the analysis over without waiting for the child to take it all (a pipe holds 64 KiB),
        and read its answers as they come (else it would wait on a full pipe between figures)."""
        self._analysis = analysis
        data = pickle.dumps(analysis, protocol=pickle.HIGHEST_PROTOCOL)
        for target, args in ((self._write, (data,)), (self._read, ())):
            thread = threading.Thread(target=target, args=args, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _write(self, data: bytes) -> None:
        stdin = self._process.stdin
        try:
            if stdin is not None:
                stdin.write(data)
                stdin.close()
        except (OSError, ValueError):  # the child died or was stopped: the figures are drawn here
            pass

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._answered = self._answer.read()  # until the child exits, draining the pipe meanwhile

    def result(self) -> dict[str, bytes] | None:
        """Every figure that has data, in the report's order: the child's, and those drawn here (the
        tickets it had not taken, and any it took and did not answer); None if never sent one."""
        analysis = self._analysis
        if analysis is None:
            return None
        figures: FigureSet | None = None
        mine: dict[str, bytes | None] = {}
        while SHARE and (ticket := os.read(self._tickets, 1)):
            figures = figures or FigureSet(analysis)
            key = FIGURE_KEYS[ticket[0]]
            mine[key] = figures.draw(key)
        for thread in self._threads:
            thread.join()
        self._process.wait()
        drawn = {**self._theirs(), **mine}
        for key in FIGURE_KEYS:
            if key not in drawn:  # taken by a child that failed or died before answering it
                figures = figures or FigureSet(analysis)
                drawn[key] = mine[key] = figures.draw(key)
        self.drawn_here = list(mine)
        return in_report_order(drawn)

    def _theirs(self) -> dict[str, bytes | None]:
        """The figures the child answered, up to the first answer that does not read as one ({} when
        it is another copy of judgebench: its figures are not this report's)."""
        stream = io.BytesIO(self._answered)
        out: dict[str, bytes | None] = {}
        try:
            if pickle.load(stream) != judgebench.__file__:
                return {}
            while stream.tell() < len(self._answered):
                key, image = pickle.load(stream)
                if key not in FIGURE_KEYS or not (image is None or isinstance(image, bytes)):
                    break
                out[key] = image
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError):
            pass  # a garbled or cut answer (the child died while writing it): the rest is drawn here
        return out

    def close(self) -> None:
        """Stop the child if it still runs (a report that failed, or never asked for its figures)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        for pipe in (self._process.stdin, self._answer):
            if pipe is not None and not pipe.closed:
                pipe.close()
        if self._tickets >= 0:
            os.close(self._tickets)
            self._tickets = -1
