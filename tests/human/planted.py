"""A planted world for the human-label tests: a sim judge (models/sim.py) whose item verdict is right
with a known probability per language, gold labels with known noise, humans who see the truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgebench.analysis.frame import COLUMNS
from judgebench.human import HumanLabel, HumanLabels, human_labels
from judgebench.models.sim import SimScenario, pair_letter


def planted_frame(
    seed: int,
    *,
    items: int,
    accuracy: dict[str, float],
    win_rate: float = 0.65,
    gold_noise: float = 0.0,
) -> tuple[pd.DataFrame, list[int]]:
    """The pair judgments (an analysis frame) of a sim judge on `items` items whose true label is 1
    with probability `win_rate`; the frame's gold label is the truth flipped with `gold_noise`.
    Returns the frame and the true labels."""
    rng = np.random.default_rng(seed)
    truth = [1 if u < win_rate else 2 for u in rng.random(items)]
    noisy = [t if u >= gold_noise else 3 - t for t, u in zip(truth, rng.random(items), strict=True)]
    judge = SimScenario(seed=seed, accuracy=accuracy, item_level_errors=True)
    rows = []
    for k, (label, gold) in enumerate(zip(truth, noisy, strict=True)):
        for cond in accuracy:
            for order in ("orig", "swap"):
                correct = "A" if (label == 1) == (order == "orig") else "B"
                letter = pair_letter(judge, f"i{k}", order, cond, correct)
                first, second = ("1", "2") if order == "orig" else ("2", "1")
                verdict = first if letter == "A" else second
                rows.append(
                    (
                        "sim",
                        f"i{k}",
                        "s",
                        "pair",
                        cond,
                        order,
                        verdict,
                        letter,
                        float(gold),
                        math.nan,
                        0,
                        0,
                        0.0,
                    )
                )
    return pd.DataFrame(rows, columns=COLUMNS), truth


def human_slice(truth: list[int], conditions: list[str], n: int, seed: int) -> HumanLabels:
    """One annotator who labels `n` random items (the same in every condition) with the truth."""
    rng = np.random.default_rng(10_000 + seed)
    chosen = sorted(rng.choice(len(truth), size=n, replace=False).tolist())
    rows = [
        HumanLabel(f"i{k}", cond, "1" if truth[k] == 1 else "2", "ann", line)
        for line, (k, cond) in enumerate(((k, c) for k in chosen for c in conditions), start=1)
    ]
    return human_labels(rows, "planted")
