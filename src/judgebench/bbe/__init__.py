"""Average bias-bounded evaluation (A-BB, PROTOCOL §5): calibrated shrinkage and Gaussian noise so that a
stated kind of bias moves a judge's scores by more than tau with probability at most delta.

Entry points: `api.bbe_from_run`, `api.bbe_from_table`, `api.bbe_from_arena_hard` (each returns an
`engine.BBERun`), then `api.write_outputs`. The formulas live in `mechanism`, the sensitivity estimate
and its upper confidence bound in `sensitivity`.
"""

from __future__ import annotations

from judgebench.bbe.engine import BBEParams, BBERun, run_bbe
from judgebench.bbe.mechanism import DeltaSplit, noise_radius_factor, sigma_max
from judgebench.records.bbe import BBEResult, Calibration

__all__ = [
    "BBEParams",
    "BBEResult",
    "BBERun",
    "Calibration",
    "DeltaSplit",
    "noise_radius_factor",
    "run_bbe",
    "sigma_max",
]
