#!/usr/bin/env python3
"""What `judge --until-settled` saves near a limit, and how often it is wrong (issues 18 and 28).

Per readiness metric (flip rate, en position inconsistency, en accuracy) a simulated judge is planted
with that metric at 0, 2, 5, 10 and 20 points from its limit (either side where the rate exists) and
every other quantity far inside its limit, so the planted metric is the one that decides. It judges a
synthetic LLMBar-shaped dataset (419 items in LLMBar's five subsets, random labels, en plus zh and ls,
both orders, zh tie-probes), a fresh dataset, order and judge per seed. A run stops at the end of the
first round (`--round` items, the CLI's default 20) after which every verdict is decided, with the
sequence's verdict; a run that reaches the last item gets the full run's verdict (the report's own,
fixed-n, `--bootstrap` resamples), as `judge --until-settled` does.

Verdicts are scored against the PLANTED truth (the rate the judge was built with, not the full run's
verdict): pass when the planted metric is within its limit, else fail. At the limit itself (0 points)
each verdict's own claim decides (PROTOCOL §4): a pass says the flip rate or position inconsistency is
at most the limit, which is true there, a fail that it is above it; an accuracy pass says the judge
is above chance, which is false at chance. So the truth there is pass, pass and fail, and a wrong
verdict is a decided one on the other side; `inconclusive` is never wrong and is counted apart. The
wrong verdicts are split into the sequence's (settled stops) and the full run's (fixed-n, at the
last item), and `runs` counts runs with a wrong verdict (a run's two targets share its baseline).
`--sequence finite` decides the stops with the without-replacement sequences for the mean of the
419 items instead (`settle(..., population=N)`), to measure what the CLI does not use.
The pair judgments are drawn with numpy by the sim provider's item-level rules (`frame`), so that
thousands of runs fit in one process, and go through the report's own code (`item_values`, `settle`,
`analyze`); tie-probes cost calls but decide nothing, so every item costs the same and calls used
are items used. `tests/judge/test_until_settled.py` runs the real stage on `sim:` judges.

Usage: `python scripts/bench_cost.py --seeds 200` (`--round`, `--bootstrap`, `--distances`,
`--sequence`, `--jobs`, `--json`). Exit 1 when a target is missed: wrong verdicts <= 5% at every
distance and <= 1% at 5 points or more; calls used <= 0.75 of the plan at 10 points and <= 0.5 at
20 points, per metric and side.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.frame import COLUMNS
from judgebench.analysis.record_pipeline import analyze
from judgebench.analysis.sequential import item_values, settle, stratified_order
from judgebench.records import Judgment

SUBSETS = {
    "Natural": 100,
    "Adversarial/Neighbor": 134,
    "Adversarial/GPTInst": 92,
    "Adversarial/GPTOut": 47,
    "Adversarial/Manual": 46,
}
TARGETS = ["zh", "ls"]
DISTANCES = (0, 2, 5, 10, 20)  # points from the limit
CALLS_GOAL = {10: 0.75, 20: 0.5}
CHUNK = 20  # seeds (judges) per frame


@dataclass(frozen=True)
class Row:
    metric: str
    distance: int
    value: float  # the planted rate
    truth: str  # pass / fail


def _limits(settings: ReportSettings) -> dict[str, float]:
    return {
        "flip rate": settings.max_flip_rate,
        "position inconsistency": settings.max_position_inconsistency,
        "accuracy": settings.chance,
    }


def rows(settings: ReportSettings) -> list[Row]:
    out = []
    for metric, limit in _limits(settings).items():
        for d in DISTANCES:
            for side in (-1,) if d == 0 else (-1, 1):
                value = round(limit + side * d / 100.0, 4)
                if not 0.0 <= value <= 1.0:
                    continue
                if metric == "accuracy":
                    truth = "pass" if value > limit else "fail"
                else:
                    truth = "fail" if value > limit else "pass"
                out.append(Row(metric, d, value, truth))
    return out


def planted(row: Row) -> tuple[float, float, float]:
    """(accuracy, position bias, flip rate): the row's metric at its planted value, the others far
    inside their limits."""
    acc, bias, flip = 0.9, 0.0, 0.0
    if row.metric == "flip rate":
        flip = row.value
    elif row.metric == "position inconsistency":
        bias = row.value
    else:
        acc = row.value
    return acc, bias, flip


def frame(row: Row, seeds: range) -> pd.DataFrame:
    """The pair judgments (a `judgment_frame`) of one judge per seed, named `s<seed>`, each on its own
    dataset (LLMBar's subset sizes, random labels). The planted judge (the sim provider's
    `item_level_errors` and `item_level_flips` rules, drawn with numpy for speed): one merit draw per
    item, correct with the planted accuracy; in each order, "A" without looking with the planted
    position bias, which with random labels makes an item order-inconsistent with probability exactly
    the bias; per target, one flip draw per item, to the other output. No ties, no invalid answers,
    and the targets share en's other draws (no position-inconsistency increase)."""
    acc, bias, flip = planted(row)
    ids = np.array([f"{subset}/{i}" for subset, n in SUBSETS.items() for i in range(n)])
    subsets = np.array([subset for subset, n in SUBSETS.items() for _ in range(n)])
    parts = []
    for seed in seeds:
        rng = np.random.default_rng([seed, DISTANCES.index(row.distance), int(1000 * row.value)])
        n = len(ids)
        label = rng.integers(1, 3, n)
        correct = rng.random(n) < acc
        merit = np.where(correct, label, 3 - label)  # the output the judge prefers on merit
        flips = {c: rng.random(n) < flip for c in TARGETS}
        for order, a_output in (("orig", 1), ("swap", 2)):
            blind = rng.random(n) < bias
            en = np.where(blind, a_output, merit)
            for cond in ["en", *TARGETS]:
                out = en if cond == "en" else np.where(flips[cond], 3 - en, en)
                winner = np.where(out == a_output, "A", "B")
                parts.append(
                    pd.DataFrame({
                        "judge": f"s{seed}", "item_id": ids, "subset": subsets, "kind": "pair",
                        "condition": cond, "order": order, "verdict": out.astype(str), "winner": winner,
                        "label": label.astype(float), "confidence": np.nan, "input_tokens": 0,
                        "output_tokens": 0, "cost_usd": np.nan,
                    })
                )  # fmt: skip
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def full_verdicts(df: pd.DataFrame, judges: list[str], settings: ReportSettings) -> dict[str, dict[str, str]]:
    """The full run's readiness verdicts (the report's own) of the judges whose items ran out."""
    if not judges:
        return {}
    rows = df[df["judge"].isin(judges)]
    records = [
        Judgment(
            judge=r.judge,
            item_id=r.item_id,
            subset=r.subset,
            kind="pair",
            condition=r.condition,
            order=r.order,
            winner=r.winner,
            verdict=r.verdict,
            label=int(r.label),
        )
        for r in rows.itertuples(index=False)
    ]
    out: dict[str, dict[str, str]] = {}
    for v in analyze(records, settings=settings, condition_order=TARGETS).readiness:
        out.setdefault(v.judge, {})[v.condition] = v.status
    return out


def run_row(
    row: Row, seeds: range, round_size: int, settings: ReportSettings, finite: bool = False
) -> list[dict[str, object]]:
    """Per seed: calls used (a share of the full plan: every item costs the same calls), verdicts and
    whether they are the sequence's (a settled stop) or the full run's. `finite`: decide on the
    without-replacement sequences for the mean of the 419 items instead (not what the CLI does)."""
    df = frame(row, seeds)
    values = item_values(df, TARGETS)
    subsets = dict(zip(df["item_id"], df["subset"], strict=False))
    runs: dict[str, dict[str, object]] = {}
    exhausted = []
    for seed in seeds:
        name = f"s{seed}"
        order = stratified_order(subsets, seed)
        population = len(order) if finite else None
        path = settle(values, name, TARGETS, settings, order, intervals=False, population=population)
        stop = len(order)
        if path.first_settled is not None:
            stop = min(len(order), math.ceil(path.first_settled / round_size) * round_size)
        if stop < len(order):
            judged = order[:stop]
            verdicts = settle(
                values, name, TARGETS, settings, judged, intervals=False, population=population
            ).verdicts
            runs[name] = {"calls": stop / len(order), "verdicts": dict(verdicts), "settled": True}
        else:
            runs[name] = {"calls": 1.0, "verdicts": {}, "settled": False}
            exhausted.append(name)
    for name, verdicts in full_verdicts(df, exhausted, settings).items():
        runs[name]["verdicts"] = verdicts
    return list(runs.values())


def summarise(row: Row, runs: list[dict[str, object]]) -> dict[str, object]:
    calls = np.array([float(r["calls"]) for r in runs])  # type: ignore[arg-type]
    verdicts = [(v, r["settled"]) for r in runs for v in r["verdicts"].values()]  # type: ignore[attr-defined]
    wrong = sum(v not in (row.truth, "inconclusive") for v, _ in verdicts)
    wrong_seq = sum(v not in (row.truth, "inconclusive") for v, settled in verdicts if settled)
    wrong_runs = sum(any(v not in (row.truth, "inconclusive") for v in r["verdicts"].values()) for r in runs)  # type: ignore[attr-defined]
    open_ = sum(v == "inconclusive" for v, _ in verdicts)
    return {
        "metric": row.metric,
        "distance": row.distance,
        "planted": row.value,
        "truth": row.truth,
        "runs": len(runs),
        "verdicts": len(verdicts),
        "calls_mean": float(calls.mean()),
        "calls_p90": float(np.quantile(calls, 0.9)),
        "wrong": wrong / max(1, len(verdicts)),
        "wrong_settled": wrong_seq / max(1, len(verdicts)),  # of all verdicts: the sequence's wrong ones
        "wrong_full_run": (wrong - wrong_seq) / max(1, len(verdicts)),  # the fixed-n ones at the last item
        "wrong_runs": wrong_runs,
        "inconclusive": open_ / max(1, len(verdicts)),
    }


def met(s: dict[str, object]) -> bool:
    d, wrong, calls = int(s["distance"]), float(s["wrong"]), float(s["calls_mean"])  # type: ignore[arg-type]
    ok = wrong <= (0.01 if d >= 5 else 0.05)
    return ok and (d not in CALLS_GOAL or calls <= CALLS_GOAL[d])


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--round", type=int, default=20, help="items per round (default 20, the CLI's)")
    ap.add_argument("--bootstrap", type=int, default=200, help="bootstrap samples of the full run's verdict")
    ap.add_argument("--distances", type=int, nargs="+", default=list(DISTANCES), help="points from the limit")
    ap.add_argument(
        "--sequence", choices=("with-replacement", "finite"), default="with-replacement",
        help="the sequences that decide a stop: the CLI's (with replacement, for the judge's rate) or the "
        "finite-population ones (without replacement, for the mean of these 419 items), for comparison",
    )  # fmt: skip
    ap.add_argument("--jobs", type=int, default=1, help="processes (chunks of seeds run in parallel)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    finite = args.sequence == "finite"
    settings = ReportSettings(bootstrap_samples=args.bootstrap)
    started = time.perf_counter()
    if not args.json:
        print(
            f"{args.seeds} seeds per row, 419 items, en+zh+ls, rounds of {args.round} items, alpha = 0.05; "
            "verdicts scored against the planted rate (2 targets per run); stops decided by the "
            f"{args.sequence} sequences"
        )
        print(WRONG)
        print(HEADER)
    table = []
    # far rows first (cheap: they stop early), each printed as it is done
    todo = sorted((r for r in rows(settings) if r.distance in args.distances), key=lambda r: -r.distance)
    chunks = [range(start, min(args.seeds, start + CHUNK)) for start in range(0, args.seeds, CHUNK)]
    with ProcessPoolExecutor(args.jobs) if args.jobs > 1 else nullcontext() as pool:
        for row in todo:  # a frame of CHUNK judges at a time: bounded memory
            tasks = [(row, chunk, args.round, settings, finite) for chunk in chunks]
            done = pool.map(_run_task, tasks) if pool is not None else map(_run_task, tasks)
            table.append(summarise(row, [run for part in done for run in part]))
            if not args.json:
                print(line(table[-1]), flush=True)
    ok = all(met(s) for s in table)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0 if ok else 1
    print("by metric:")
    print(HEADER)
    for s in sorted(table, key=lambda s: (METRICS.index(str(s["metric"])), s["distance"], s["planted"])):
        print(line(s))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    took = time.perf_counter() - started
    print(f"{'all targets met' if ok else 'some target MISSED'}; {took:.0f} s, load average {load}")
    return 0 if ok else 1


def _run_task(task: tuple[Row, range, int, ReportSettings, bool]) -> list[dict[str, object]]:
    row, seeds, round_size, settings, finite = task
    return run_row(row, seeds, round_size, settings, finite)


WRONG = (
    "truth: pass when the planted rate is within its limit, else fail; at the limit itself (0 points) that "
    "is pass for\nflip rate and position inconsistency (a pass claims the rate is at most the limit, a fail "
    "that it is above)\nand fail for accuracy (a pass claims it is above chance); wrong = a decided verdict "
    "on the other side\n(inconclusive is never wrong), as a share of all verdicts, split into the "
    "sequence's (settled stops)\nand the full run's fixed-n ones (runs that reached the last item); runs: "
    "runs with a wrong verdict"
)
HEADER = (
    f"{'metric':<24}{'points':>7}{'planted':>9}{'truth':>6}{'calls':>7}{'p90':>6}{'wrong':>8}"
    f"{'settled':>8}{'full':>6}{'runs':>5}{'inconcl.':>9}  target"
)
METRICS = ["flip rate", "position inconsistency", "accuracy"]


def line(s: dict[str, object]) -> str:
    d = int(s["distance"])  # type: ignore[call-overload]
    goal = f"wrong <= {'1' if d >= 5 else '5'}%"
    goal += f", calls <= {CALLS_GOAL[d]}" if d in CALLS_GOAL else ""
    return (
        f"{s['metric']!s:<24}{d:>7}{float(s['planted']):>9.2f}{s['truth']!s:>6}"  # type: ignore[arg-type]
        f"{float(s['calls_mean']):>7.3f}{float(s['calls_p90']):>6.2f}"  # type: ignore[arg-type]
        f"{float(s['wrong']):>8.1%}{float(s['wrong_settled']):>8.1%}{float(s['wrong_full_run']):>6.1%}"  # type: ignore[arg-type]
        f"{int(s['wrong_runs']):>5}{float(s['inconclusive']):>9.1%}"  # type: ignore[call-overload,arg-type]
        f"  {goal} {'ok' if met(s) else 'MISSED'}"
    )


if __name__ == "__main__":
    sys.exit(main())
