"""Ctrl-C during an embedded-model generation exits at once (first hour, third pass, item 3): the
generation runs on a daemon thread, so the event loop's shutdown does not wait for it. The old
`asyncio.to_thread` made the process wait for the generation to end (47 s of a translation)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, os, signal, sys, time
    from judgebench.models.local import in_daemon_thread

    def generation():          # a generation that would take five minutes
        time.sleep(300)
        return "done"

    async def main():
        asyncio.get_running_loop().call_later(0.3, os.kill, os.getpid(), signal.SIGINT)
        return await {runner}(generation)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    """
)


def _interrupted(runner: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT.format(runner=runner)], capture_output=True, text=True, timeout=150
    )


def test_ctrl_c_during_a_generation_exits_without_waiting_for_it() -> None:
    done = _interrupted("in_daemon_thread")
    assert done.returncode == 130, done.stderr
    assert done.stdout.strip() == "interrupted"


def test_the_answer_comes_back_when_nobody_interrupts() -> None:
    import asyncio

    from judgebench.models.local import in_daemon_thread

    def add(a: int, b: int) -> int:
        return a + b

    def fail() -> None:
        raise ValueError("binding error")

    assert asyncio.run(in_daemon_thread(add, 2, 3)) == 5
    try:
        asyncio.run(in_daemon_thread(fail))
    except ValueError as exc:
        assert str(exc) == "binding error"
    else:
        raise AssertionError("the thread's exception was lost")
