"""The leaderboard weights of a run's dataset, read from configs/hub_datasets.toml at the boundary so
that `analysis` stays a pure function of what it is given."""

from __future__ import annotations

from judgebench.analysis.rewardbench_score import Weights
from judgebench.data.hubconfig import hub_datasets


def leaderboard_weights(spec: str | None) -> Weights | None:
    """The weights of the hub dataset a run is about (`rewardbench`, `m-rewardbench[:langs]`, any
    table with example_counts), its sections the categories of its own or its English table; else None."""
    family = (spec or "").strip().lower().partition(":")[0]
    tables = hub_datasets()
    table = tables.get(family)
    if table is None:
        return None
    english = tables.get(table.english) if table.english else None
    sections = table.categories or (english.categories if english is not None else {})
    counts = table.example_counts
    if not counts or not sections:
        return None
    return Weights(scheme=family, sections={k: list(v) for k, v in sections.items()}, counts=dict(counts))
