"""The leaderboard weights of a run's dataset, read from configs/hub_datasets.toml at the boundary so
that `analysis` stays a pure function of what it is given."""

from __future__ import annotations

from judgebench.analysis.leaderboard import Weights
from judgebench.data.hubconfig import M_REWARDBENCH_SPEC, REWARDBENCH_SPEC, hub_dataset


def leaderboard_weights(spec: str | None) -> Weights | None:
    """The weights of the dataset a run is about (`rewardbench`, `m-rewardbench[:langs]`), else None."""
    family = (spec or "").strip().lower().partition(":")[0]
    if family not in (REWARDBENCH_SPEC, M_REWARDBENCH_SPEC):
        return None
    sections = hub_dataset(REWARDBENCH_SPEC).categories
    counts = hub_dataset(family).example_counts
    if not counts or not sections:
        return None
    return Weights(scheme=family, sections={k: list(v) for k, v in sections.items()}, counts=dict(counts))
