"""Drift between two runs (`judgebench compare RUN_A RUN_B`): the same items judged twice (two judge
versions, two templates, two dates), paired unit by unit. Pure computation on the runs' judgment
tables (`pairing`, `drift`, `changes`) and the files it writes (`outputs`); the API reads the runs."""

from __future__ import annotations

from judgebench.compare.compare_doc import (
    ChangedUnit,
    CompareDoc,
    Coverage,
    Drift,
    GateSettings,
    JudgeMatch,
)

__all__ = ["ChangedUnit", "CompareDoc", "Coverage", "Drift", "GateSettings", "JudgeMatch"]
