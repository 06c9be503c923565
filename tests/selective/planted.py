"""A planted run for selective judging: judges whose verdict-token probabilities are informative (or
noise) about whether they agree with the humans, written as a real run folder (judgments.jsonl) with a
human-labels file beside it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from judgebench.records import Judgment
from judgebench.selective import SimJudge


def judge_answers(
    name: str, sim: SimJudge, truth: list[int], rng: np.random.Generator, cost: float = 0.001
) -> list[Judgment]:
    """Both orders of every item: the item verdict is wrong with the sim judge's probability given its
    confidence c, and the verdict's probability (both orders alike) is 0.5 + 0.5 c."""
    conf, wrong = sim.draw(rng, (1, len(truth)))
    out = []
    for k, (label, c, bad) in enumerate(zip(truth, conf[0], wrong[0], strict=True)):
        chosen = 3 - label if bad else label
        p_chosen = 0.5 + 0.5 * float(c)
        for order in ("orig", "swap"):
            letter = "A" if (chosen == 1) == (order == "orig") else "B"
            p_a = p_chosen if letter == "A" else 1.0 - p_chosen
            out.append(
                Judgment(
                    judge=name,
                    item_id=f"i{k}",
                    subset="s",
                    kind="pair",
                    condition="en",
                    order=order,
                    raw=json.dumps({"winner": letter}),
                    winner=letter,
                    verdict=str(chosen),
                    label=label,
                    prob_a=p_a,
                    prob_b=1.0 - p_a,
                    prob_tie=0.0,
                    cost_usd=cost,
                )
            )
    return out


def planted_run(
    root: Path, judges: dict[str, tuple[SimJudge, float]], *, items: int, labelled: int, seed: int = 0
) -> tuple[Path, Path]:
    """A run folder with every judge's answers on `items` items, and a labels CSV (one annotator who
    sees the truth) on the first `labelled` of them: (run, labels)."""
    rng = np.random.default_rng(seed)
    truth = [1 if u < 0.5 else 2 for u in rng.random(items)]
    run = root / "run"
    run.mkdir(parents=True)
    with open(run / "judgments.jsonl", "w", encoding="utf-8") as fh:
        for name, (sim, cost) in judges.items():
            for j in judge_answers(name, sim, truth, rng, cost):
                fh.write(j.model_dump_json() + "\n")
    labels = root / "labels.csv"
    with open(labels, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "condition", "label", "annotator"])
        for k in range(labelled):
            writer.writerow([f"i{k}", "en", truth[k], "ann"])
    return run, labels
