"""The one module of analysis/ that reads files: a run folder's judgments, audit flags and conditions.

Nothing else in analysis/ imports it (the api layer is its place; until then it is re-exported by
`judgebench.analysis`); `pipeline.analyze` is the pure entry it feeds.
"""

from __future__ import annotations

from judgebench.analysis.model import Analysis, ReportSettings
from judgebench.analysis.pipeline import analyze
from judgebench.errors import RunDirError
from judgebench.records import AuditFlag, Judgment
from judgebench.rundir import AUDIT, JUDGMENTS, RunDir, last_per_key, read_jsonl


def recorded_conditions(run: RunDir) -> list[str]:
    """The target conditions the run's translate stage recorded, in its order (zh, ls, ...)."""
    stages = run.load_manifest().get("stages", {})
    recorded = [
        c.get("name") for c in (stages.get("translate") or {}).get("conditions", []) if isinstance(c, dict)
    ]
    return [str(c) for c in recorded if c]


def analyze_run(run: RunDir, settings: ReportSettings | None = None) -> Analysis:
    """Analyse a run folder: the last line per call key of judgments.jsonl, flags from audit.jsonl."""
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(f"{path} does not exist: run `judgebench judge --run {run.path}` first")
    judgments = last_per_key(read_jsonl(path, Judgment), lambda j: j.call_key())
    flagged = {flag.item_id for flag in read_jsonl(run.file(AUDIT), AuditFlag)}
    # pairs are named zh->ls in the order the run's translate stage recorded
    order = recorded_conditions(run)
    return analyze(
        judgments.values(), flagged_items=flagged, settings=settings, condition_order=order or None
    )
