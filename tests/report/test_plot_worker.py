"""The figures drawn by a second process (report/plot_worker.py): the same PNG bytes as drawn in the
report's own process, and a worker that fails, dies or runs another judgebench is never worse than
none (the figures are drawn here)."""

from __future__ import annotations

import array
import fcntl
import shutil
import termios
import time
from pathlib import Path

import pytest

from judgebench import api
from judgebench.analysis import Analysis
from judgebench.report import plot_worker, write_report
from judgebench.report.figures import DRAW_ORDER, FIGURE_KEYS, FigureSet
from judgebench.report.plot_worker import PlotWorker
from judgebench.store.run_folder import RunDir

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "run_main_2026_12"


def _plots(run: Path) -> dict[str, bytes]:
    return {png.name: png.read_bytes() for png in sorted((run / "plots").glob("*.png"))}


def _worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlotWorker:
    monkeypatch.setattr(plot_worker, "MIN_BYTES", 0)
    (tmp_path / "judgments.jsonl").write_text("{}\n", encoding="utf-8")
    worker = PlotWorker.start(tmp_path / "judgments.jsonl")
    assert worker is not None
    return worker


def test_the_worker_draws_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_analysis: Analysis
) -> None:
    here = write_report(RunDir(tmp_path / "here"), full_analysis)
    monkeypatch.setattr(plot_worker, "SHARE", False)  # this process takes no ticket: the child draws all
    worker = _worker(tmp_path, monkeypatch)
    try:
        there = write_report(RunDir(tmp_path / "there"), full_analysis, plot_worker=worker)
    finally:
        worker.close()
    assert worker.drawn_here == []  # the child drew every one, not a fallback here
    assert set(there.plots) == set(here.plots) and len(here.plots) >= 5
    assert _plots(tmp_path / "there") == _plots(tmp_path / "here")
    assert (tmp_path / "there" / "report.html").read_bytes().count(b"data:image/png;base64") == (
        tmp_path / "here" / "report.html"
    ).read_bytes().count(b"data:image/png;base64")


def test_the_two_processes_share_the_figures_and_draw_each_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_analysis: Analysis
) -> None:
    """This process takes the tickets the child has not taken when it needs the figures: every figure
    is drawn by exactly one of the two, the same bytes either way. The child is let take its first
    ticket before this process asks, so both draw some."""
    here = write_report(RunDir(tmp_path / "here"), full_analysis)
    drawn: list[str] = []
    draw = FigureSet.draw

    def counted(self: FigureSet, key: str) -> bytes | None:
        drawn.append(key)
        return draw(self, key)

    monkeypatch.setattr(FigureSet, "draw", counted)  # this process only: the child is not patched
    worker = _worker(tmp_path, monkeypatch)
    try:
        worker.send(full_analysis)
        deadline = time.monotonic() + 60
        while _tickets_left(worker) == len(DRAW_ORDER) and time.monotonic() < deadline:
            time.sleep(0.02)  # until the child has taken a ticket
        figures = worker.result()
    finally:
        worker.close()
    assert 0 < len(worker.drawn_here) < len(FIGURE_KEYS)  # each process drew some of them
    assert figures is not None and list(figures) == list(here.plots)
    assert figures == _plots_by_key(tmp_path / "here")
    assert drawn == worker.drawn_here  # this process drew only the figures it says it did
    assert len(set(drawn)) == len(drawn) and set(drawn) <= set(FIGURE_KEYS)
    assert sorted(DRAW_ORDER) == sorted(FIGURE_KEYS)


def _tickets_left(worker: PlotWorker) -> int:
    """Bytes waiting in the ticket pipe: the figures no process has taken yet."""
    left = array.array("i", [0])
    fcntl.ioctl(worker._tickets, termios.FIONREAD, left)
    return left[0]


def _plots_by_key(run: Path) -> dict[str, bytes]:
    return {png.stem: png.read_bytes() for png in (run / "plots").glob("*.png")}


@pytest.mark.parametrize(
    "boot",
    [
        "import sys; sys.exit(3)",  # fails
        "import os; os._exit(0)",  # dies without answering
        # another copy of the package answers: its figures are not this report's
        "import pickle, sys; sys.stdin.buffer.read(); "
        "pickle.dump(('/elsewhere/judgebench/__init__.py', {}), open(int(sys.argv[2]), 'wb'))",
        "import sys; sys.stdin.buffer.read(); open(int(sys.argv[2]), 'wb').write(b'not a pickle')",
        # takes a ticket (the costliest figure) and dies before answering it
        "import os, sys; sys.stdin.buffer.read(); os.read(int(sys.argv[3]), 1); os._exit(1)",
        # answers one figure (the costliest), takes another, then dies in the middle of the next
        "import json, sys; sys.path[:] = json.loads(sys.argv[1]); import os, pickle, judgebench; "
        "from judgebench.report.figures import FIGURE_KEYS, FigureSet; "
        "a = pickle.load(sys.stdin.buffer); out = open(int(sys.argv[2]), 'wb'); "
        "pickle.dump(judgebench.__file__, out); k = FIGURE_KEYS[os.read(int(sys.argv[3]), 1)[0]]; "
        "pickle.dump((k, FigureSet(a).draw(k)), out); os.read(int(sys.argv[3]), 1); "
        "out.write(pickle.dumps(('accuracy', b'x' * 99))[:20]); out.flush(); os._exit(1)",
    ],
)
def test_a_worker_that_fails_leaves_the_figures_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_analysis: Analysis, boot: str
) -> None:
    write_report(RunDir(tmp_path / "here"), full_analysis)
    monkeypatch.setattr(plot_worker, "_BOOT", boot)
    monkeypatch.setattr(plot_worker, "SHARE", False)  # the child takes the tickets, in DRAW_ORDER
    worker = _worker(tmp_path, monkeypatch)
    try:
        write_report(RunDir(tmp_path / "there"), full_analysis, plot_worker=worker)
    finally:
        worker.close()
    assert _plots(tmp_path / "there") == _plots(tmp_path / "here") != {}
    # every figure but the one the last child answered is drawn here, the lost ticket too
    answered = {DRAW_ORDER[0]} if "FigureSet(a).draw" in boot else set()
    assert sorted(worker.drawn_here) == sorted(set(FIGURE_KEYS) - answered)


def test_a_worker_never_asked_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = _worker(tmp_path, monkeypatch)
    worker.close()  # e.g. the report failed before its figures: the child must not linger
    assert worker._process.poll() is not None


def test_no_worker_for_a_small_run_or_when_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = tmp_path / "judgments.jsonl"
    small.write_text("{}\n" * 10, encoding="utf-8")
    assert PlotWorker.start(small) is None  # below MIN_BYTES a second interpreter costs more
    monkeypatch.setattr(plot_worker, "MIN_BYTES", 0)
    monkeypatch.setenv(plot_worker.ENV, "0")
    assert PlotWorker.start(small) is None
    monkeypatch.setattr(plot_worker.sys, "executable", str(tmp_path / "no-such-python"))
    monkeypatch.delenv(plot_worker.ENV)
    assert PlotWorker.start(small) is None  # cannot start: drawn here


def test_report_uses_the_worker_and_writes_what_it_would_write_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    alone, beside = tmp_path / "alone", tmp_path / "beside"
    shutil.copytree(FIXTURE, alone)
    shutil.copytree(FIXTURE, beside)
    monkeypatch.setenv(plot_worker.ENV, "0")
    api.report(alone)
    monkeypatch.delenv(plot_worker.ENV)
    monkeypatch.setattr(plot_worker, "MIN_BYTES", 0)
    started: list[PlotWorker] = []
    start = PlotWorker.start.__func__  # type: ignore[attr-defined]

    def spy(cls: type[PlotWorker], judgments: Path) -> PlotWorker | None:
        worker = start(cls, judgments)
        if worker is not None:
            started.append(worker)
        return worker

    monkeypatch.setattr(PlotWorker, "start", classmethod(spy))
    api.report(beside)
    assert len(started) == 1 and started[0]._process.poll() is not None  # used, then closed
    assert _plots(beside) == _plots(alone) != {}
    assert (beside / "metrics.json").read_bytes() == (alone / "metrics.json").read_bytes()
