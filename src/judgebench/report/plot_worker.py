"""The report's figures drawn by a second process while this one writes the rest of the report.

Why: drawing the figures is a third of a report at LLMBar size (about 2 s of matplotlib on one core),
and the rest of the report (metrics.json, the sections, the item explorer) does not need them. The
worker is started before the run is read, so that its own imports (matplotlib, the report package)
overlap the analysis; it is sent the finished `Analysis` by pickle over its stdin and answers with
the PNG bytes `make_plots` gives, which are the same bytes as drawn here (a test compares them).

Whatever goes wrong with it (no second core, the interpreter cannot start, it runs another copy of
judgebench, it fails or dies), the caller draws the figures itself: the worker only ever saves time.
`JUDGEBENCH_PLOT_WORKER=0` turns it off; a run smaller than MIN_BYTES of judgments never starts one
(a second interpreter costs more than the few figures of a small run).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import judgebench
from judgebench.report.figures import make_plots

if TYPE_CHECKING:
    from judgebench.analysis.model import Analysis

ENV = "JUDGEBENCH_PLOT_WORKER"  # "0": always draw in this process
# judgments.jsonl at least this large (about 5,000 judgments of 800 bytes) is worth a second process
MIN_BYTES = 4 << 20
# the child: this process's import path, then `serve` (importing this module imports the figures,
# which is what the child does while the parent analyses); argv[2] is the pipe it answers on
_BOOT = (
    "import json, sys\n"
    "sys.path[:] = json.loads(sys.argv[1])\n"
    "from judgebench.report.plot_worker import serve\n"
    "serve(int(sys.argv[2]))\n"
)


def serve(answer_fd: int) -> None:
    """The child: draw the analysis its stdin sends and answer on `answer_fd` (its own pipe, so
    that nothing a library prints on stdout can garble the answer)."""
    analysis = pickle.load(sys.stdin.buffer)
    plots = make_plots(analysis)
    with open(answer_fd, "wb") as answer:
        pickle.dump((judgebench.__file__, plots), answer, protocol=pickle.HIGHEST_PROTOCOL)


class PlotWorker:
    """One child process drawing one report's figures (`send`, then `result`; `close` always)."""

    def __init__(self, process: subprocess.Popen[bytes], answer: BinaryIO) -> None:
        self._process = process
        self._answer = answer
        self._sender: threading.Thread | None = None

    @classmethod
    def start(cls, judgments: Path) -> PlotWorker | None:
        """A worker for a report of `judgments`, or None where it would not pay or cannot start."""
        if os.environ.get(ENV, "1").strip() == "0" or (os.cpu_count() or 1) < 2:
            return None
        try:
            if judgments.stat().st_size < MIN_BYTES:
                return None
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(write_end)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,  # a failure is drawn again here, where its error shows
                pass_fds=(write_end,),
            )
        except (OSError, ValueError):  # no interpreter, or no way to pass it a pipe (Windows)
            os.close(read_end)
            return None
        finally:
            os.close(write_end)  # the child holds it now: its exit ends the answer
        return cls(process, os.fdopen(read_end, "rb"))

    def send(self, analysis: Analysis) -> None:
        """Hand the analysis over without waiting for the child to take it all (a pipe holds 64 KiB)."""
        data = pickle.dumps(analysis, protocol=pickle.HIGHEST_PROTOCOL)
        self._sender = threading.Thread(target=self._write, args=(data,), daemon=True)
        self._sender.start()

    def _write(self, data: bytes) -> None:
        stdin = self._process.stdin
        try:
            if stdin is not None:
                stdin.write(data)
                stdin.close()
        except (OSError, ValueError):  # the child died or was stopped: the figures are drawn here
            pass

    def result(self) -> dict[str, bytes] | None:
        """The figures the child drew, or None (it failed, died, or is another judgebench)."""
        if self._sender is None:
            return None
        try:
            answer = self._answer.read()
            code = self._process.wait()
            if code != 0 or not answer:
                return None
            origin, plots = pickle.loads(answer)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
            return None
        if origin != judgebench.__file__ or not isinstance(plots, dict):
            return None  # another copy of the package drew them: draw ours here
        return plots

    def close(self) -> None:
        """Stop the child if it still runs (a report that failed, or never asked for its figures)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        if self._sender is not None:
            self._sender.join(timeout=5)
        for pipe in (self._process.stdin, self._answer):
            if pipe is not None and not pipe.closed:
                pipe.close()
