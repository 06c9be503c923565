"""Schematic-adherence sensitivity (PROTOCOL §5): how much of the overall verdict the rubric leaves out.

Regress the overall score on degree-2 polynomial features of the factor scores (squares and pairwise
interactions), by OLS and by ridge (alpha 0.01, intercept unpenalised, as scikit-learn's Ridge on
PolynomialFeatures does), take the better R^2, and use sqrt(1 - R^2) * R as a sensitivity, R the score
range (1 in normalised units). The R^2 is in-sample, so this is a plug-in figure with no bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement
from typing import Literal

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
Strategy = Literal["formatting", "max", "rms", "mean"]
STRATEGIES: tuple[str, ...] = ("formatting", "max", "rms", "mean")


def poly2_features(x: FloatArray) -> FloatArray:
    """Columns x_i and x_i * x_j for i <= j (no constant: the intercept is fitted by centring)."""
    cols = [x[:, i] for i in range(x.shape[1])]
    cols += [x[:, i] * x[:, j] for i, j in combinations_with_replacement(range(x.shape[1]), 2)]
    return np.column_stack(cols)


def _r2(y: FloatArray, fitted: FloatArray) -> float:
    sst = float(np.sum((y - y.mean()) ** 2))
    sse = float(np.sum((y - fitted) ** 2))
    if sst <= 0:
        return 1.0 if sse <= 1e-12 else 0.0
    return 1.0 - sse / sst


def fit_r2(features: FloatArray, y: FloatArray, *, ridge: float = 0.0) -> float:
    """R^2 of a linear fit with intercept; ridge > 0 penalises the slopes only (closed form, centred)."""
    xm = features.mean(axis=0)
    ym = float(y.mean())
    xc = features - xm
    yc = y - ym
    if ridge > 0:
        gram = xc.T @ xc + ridge * np.eye(xc.shape[1])
        coef = np.linalg.solve(gram, xc.T @ yc)
    else:
        coef = np.linalg.lstsq(xc, yc, rcond=None)[0]
    return _r2(y, ym + xc @ coef)


@dataclass(frozen=True)
class SchematicFit:
    r2_ols: float
    r2_ridge: float
    r2: float
    sensitivity: float  # sqrt(1 - R^2), normalised units
    n: int
    factors: tuple[str, ...]


def schematic_sensitivity(factors: FloatArray, overall: FloatArray, names: tuple[str, ...]) -> SchematicFit:
    """OLS and ridge(0.01) R^2 of overall ~ poly2(factors); sensitivity sqrt(1 - max R^2) (normalised)."""
    if factors.ndim != 2 or factors.shape[0] != overall.shape[0]:
        raise ValueError("factors must be an (n, k) array aligned with the overall scores")
    if factors.shape[0] < 3:
        raise ValueError("the schematic fit needs at least 3 rows with every factor and the overall score")
    feats = poly2_features(factors)
    r2_ols = max(0.0, min(1.0, fit_r2(feats, overall)))
    r2_ridge = max(0.0, min(1.0, fit_r2(feats, overall, ridge=0.01)))
    r2 = max(r2_ols, r2_ridge)
    return SchematicFit(r2_ols, r2_ridge, r2, math.sqrt(1.0 - r2), int(factors.shape[0]), names)


def combine(neighbour: float | None, schematic: float | None, strategy: Strategy) -> float:
    """Combine the neighbour (formatting) estimate with the schematic one by a named strategy."""
    if schematic is None or strategy == "formatting":
        if neighbour is None:
            raise ValueError(
                "no neighbour pairs and no schematic fit: nothing to estimate the sensitivity from"
            )
        return neighbour
    if neighbour is None:
        return schematic
    if strategy == "max":
        return max(neighbour, schematic)
    if strategy == "rms":
        return math.sqrt((neighbour**2 + schematic**2) / 2.0)
    if strategy == "mean":
        return (neighbour + schematic) / 2.0
    raise ValueError(f"unknown strategy '{strategy}'")
