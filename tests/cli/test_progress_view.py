"""Progress: the library counts and sends records, never draws; the CLI's view draws a bar on a
terminal, plain lines off one at the chosen interval, and nothing when progress is turned off."""

from __future__ import annotations

import io
import logging

import pytest
from rich.console import Console

from judgebench import progress
from judgebench.cli.app import _library_warnings
from judgebench.cli.progress_view import PROGRESS_LOGGER, ProgressView, shown_progress
from judgebench.progress import ProgressReporter


def _calls(bar: ProgressReporter) -> None:
    bar.advance(tokens=1200, cost=0.0125)
    bar.advance(tokens=300, cost=0.0025, failed=True)
    bar.advance(cached=True)


def test_the_library_counts_and_draws_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressReporter(4, "judge x", enabled=True) as bar:  # asked for a bar, but nobody listens
        _calls(bar)
    assert (bar.done, bar.tokens, bar.cached, bar.failed) == (3, 1500, 1, 1)
    assert bar.cost == pytest.approx(0.015)
    line = bar.line()
    assert line.startswith("judge x: 3/4 calls, ") and "$0.0150, 1 cached, 1 failed, " in line
    assert line.endswith(" so far")  # how long the stage has run, said even before any call ends
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    with ProgressReporter(1, "unknown") as bar:
        bar.advance(cost=None)
    assert bar.cost is None and ", unpriced, " in bar.line()


def test_the_cli_draws_counts_tokens_and_cost_on_a_terminal() -> None:
    buffer = io.StringIO()
    view = ProgressView(Console(file=buffer, force_terminal=True, width=150), terminal=True)
    with shown_progress(view), ProgressReporter(4, "judge gpt41mini") as bar:
        _calls(bar)
    text = buffer.getvalue()
    assert "judge gpt41mini" in text and "3/4" in text
    assert "1,500 tok" in text and "$0.0150" in text and "1 cached" in text and "1 failed" in text


def test_off_a_terminal_plain_lines_at_the_interval(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    buffer = io.StringIO()
    view = ProgressView(Console(file=buffer, force_terminal=True), terminal=False)
    with shown_progress(view), ProgressReporter(4, "judge x") as bar:  # default 30 s: too soon for a line
        _calls(bar)
    assert capsys.readouterr().err == "" and buffer.getvalue() == ""
    monkeypatch.setenv("JUDGEBENCH_PROGRESS_SECONDS", "0")
    with shown_progress(view), ProgressReporter(4, "judge x") as bar:
        _calls(bar)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("judge x: 3/4 calls, ") and "1 failed" in lines[-1]
    assert buffer.getvalue() == ""  # no bar, no control codes


def test_progress_turned_off_shows_nothing_even_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEBENCH_PROGRESS_SECONDS", "0")
    buffer = io.StringIO()
    for terminal in (True, False):
        view = ProgressView(Console(file=buffer, force_terminal=True), terminal=terminal)
        with shown_progress(view), ProgressReporter(4, "judge x", enabled=False) as bar:
            _calls(bar)
    assert buffer.getvalue() == "" and capsys.readouterr().err == ""


def test_the_view_listens_where_the_library_speaks_and_only_while_a_command_runs() -> None:
    assert PROGRESS_LOGGER == progress.PROGRESS_LOGGER
    logger = logging.getLogger(PROGRESS_LOGGER)
    before = list(logger.handlers)
    with shown_progress() as view:
        assert view in logger.handlers
    assert logger.handlers == before and not logger.isEnabledFor(logging.INFO)


def test_a_library_warning_is_a_line_on_stderr_while_a_command_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The batch runner logs 'left running at the provider' instead of printing: the CLI shows it."""
    with _library_warnings():
        logging.getLogger("judgebench.batch.runner").warning("judgebench: j: batch b1 left running")
    assert "judgebench: j: batch b1 left running" in capsys.readouterr().err


def test_the_expected_time_is_said_first_and_corrected_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEBENCH_PROGRESS_SECONDS", "0")
    view = ProgressView(Console(file=io.StringIO()), terminal=False)
    with shown_progress(view), ProgressReporter(8, "judge x", expected=(60.0, "judge x: expected 1m")) as bar:
        for _ in range(8):
            bar.advance()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "judge x: expected 1m" and lines[1].startswith("judge x: 1/8 calls, ")
    assert len([ln for ln in lines if "left at that pace (expected 1m00s in all)" in ln]) == 1
    buffer = io.StringIO()
    bars = ProgressView(Console(file=buffer, force_terminal=True, width=150), terminal=True)
    with shown_progress(bars), ProgressReporter(4, "judge y", expected=(5.0, "judge y: expected 5s")) as bar:
        bar.advance()
    assert "judge y: expected 5s" in buffer.getvalue() and capsys.readouterr().err == ""


def test_off_a_terminal_a_line_comes_at_the_interval_even_while_no_call_finishes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One embedded-model translation took 11 minutes and nothing was said (first hour, third pass):
    the plain line comes every interval whether or not a call finished, and says when the stage is
    past its expected time."""
    import time as clock_module

    monkeypatch.setenv("JUDGEBENCH_PROGRESS_SECONDS", "0.2")
    view = ProgressView(Console(file=io.StringIO()), terminal=False)
    with shown_progress(view), ProgressReporter(2, "translate local", expected=(0.1, "expected <1s")):
        deadline = clock_module.monotonic() + 30
        while clock_module.monotonic() < deadline:
            clock_module.sleep(0.1)
            err = capsys.readouterr().err
            if "translate local: 0/2 calls" in err:
                break
        else:
            raise AssertionError("no line while no call finished")
    assert "past the expected" in err and "so far" in err
    clock_module.sleep(0.5)
    assert "translate local" not in capsys.readouterr().err  # the lines stop with the stage


def test_calls_dropped_from_the_total_shrink_the_bar_and_the_line() -> None:
    """A stage that counted calls it will not make (bbe's fresh check of a calibration with no
    release) drops them: the bar and the plain line end at what was made, not short of the total."""
    buffer = io.StringIO()
    view = ProgressView(Console(file=buffer, force_terminal=True, width=150), terminal=True)
    with shown_progress(view), ProgressReporter(5, "bbe neighbours x") as bar:
        bar.advance(tokens=10)
        bar.advance(tokens=10)
        bar.drop(3)
    assert bar.total == 2 and bar.line().startswith("bbe neighbours x: 2/2 calls, ")
    assert "2/2" in buffer.getvalue() and "2/5" not in buffer.getvalue().rsplit("\r", 1)[-1]
