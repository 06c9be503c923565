"""Every exit code of the `judgebench` command, in one table (INTERFACE.md: 0 on success, non-zero
with a one-line reason on stderr)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    # a JudgebenchError: bad input, a setting that cannot work, a run folder that does not fit
    ERROR = 1
    # a bad flag or flag value (click's usage error)
    USAGE = 2
    # the command finished, but left work undone: calls that failed after all retries (a rerun
    # retries only them), items that could not be translated, an infeasible A-BB release
    INCOMPLETE = 3
    # `report --gate`: some readiness verdict is `fail`; `compare --gate`/`--gate-mcnemar`: the verdicts
    # changed beyond the limit between the two runs
    GATE_FAIL = 4
    # `report --gate strict`: the run is incomplete or some verdict is `inconclusive`
    GATE_UNSETTLED = 5
    # Ctrl-C: everything received so far is saved
    INTERRUPTED = 130
