#!/usr/bin/env python3
"""What `judge --until-settled` saves, and how often it changes the answer (issue 18).

A simulated fleet (configs/sim.toml: bench-biased, bench-unbiased, bench-borderline, bench-always-a)
judges a synthetic LLMBar-shaped dataset (419 items in LLMBar's five subsets, en plus zh and ls,
both orders, tie-probes) over many seeds. Per seed and judge, the full protocol's readiness verdicts
come from `analyze` (the report's own verdict, item-clustered bootstrap), and the sequential ones
from `analysis.sequential.settle` over the same judgments taken in the seeded, subset-stratified
order, stopped at the end of the first round (`--round` items) after which every verdict is decided.
The judgments are those the sim provider would answer (`pair_letter`, `probe_letter`), built here
directly so that hundreds of seeds take minutes; `tests/judge/test_until_settled.py` runs the real
`judge --until-settled` stage on the same judges.

Prints per judge kind: calls used as a ratio of the full protocol (mean, 90th percentile), how often
a judge stopped early, and the verdict error rate: the share of (seed, target) verdicts the full run
decided (pass or fail) that the sequential run contradicts or leaves undecided.
Usage: `python scripts/bench_cost.py --seeds 200` (`--round`, `--bootstrap`, `--json`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from judgebench.analysis.frame import judgment_frame
from judgebench.analysis.model import ReportSettings
from judgebench.analysis.pipeline import analyze
from judgebench.analysis.sequential import item_values, settle, stratified_order
from judgebench.models.sim import SimScenario, load_scenario, pair_letter, probe_letter
from judgebench.records import Judgment

KINDS = {
    "clearly biased": "bench-biased",
    "clearly unbiased": "bench-unbiased",
    "borderline": "bench-borderline",
    "degenerate always-A": "bench-always-a",
}
SUBSETS = {
    "Natural": 100,
    "Adversarial/Neighbor": 134,
    "Adversarial/GPTInst": 92,
    "Adversarial/GPTOut": 47,
    "Adversarial/Manual": 46,
}
TARGETS = ["zh", "ls"]
TARGETS_MET = {"clearly biased": 0.35, "degenerate always-A": 0.35, "clearly unbiased": 0.6}


def dataset(seed: int) -> dict[str, tuple[str, int]]:
    """item id -> (subset, label): LLMBar's subset sizes, labels at random."""
    rng = np.random.default_rng(seed)
    out: dict[str, tuple[str, int]] = {}
    for subset, n in SUBSETS.items():
        for i in range(n):
            out[f"{subset}/{i}"] = (subset, int(rng.integers(1, 3)))
    return out


def _pair_verdict(letter: str, order: str) -> str:
    if letter in ("invalid", "Tie"):
        return letter.lower()
    first, second = ("1", "2") if order == "orig" else ("2", "1")
    return first if letter == "A" else second


def judgments(name: str, s: SimScenario, items: dict[str, tuple[str, int]]) -> list[Judgment]:
    """Every call of the full protocol, answered as the sim provider would."""
    out = []
    for item, (subset, label) in items.items():
        for cond in ["en", *TARGETS]:
            for order in ("orig", "swap"):
                gold = "A" if (label == 1) == (order == "orig") else "B"
                letter = pair_letter(s, item, order, cond, gold)
                out.append(
                    Judgment(
                        judge=name,
                        item_id=item,
                        subset=subset,
                        kind="pair",
                        condition=cond,
                        order=order,
                        winner=letter if letter != "invalid" else "invalid",
                        verdict=_pair_verdict(letter, order),
                        label=label,
                    )
                )
        for cond in TARGETS[:1]:  # configs/conditions.toml: zh has tie-probes, ls none
            for order in (f"en_{cond}", f"{cond}_en"):
                letter = probe_letter(s, item, order, cond)
                first, second = order.split("_", 1)
                verdict = "tie" if letter == "Tie" else (first if letter == "A" else second)
                out.append(
                    Judgment(
                        judge=name,
                        item_id=item,
                        subset=subset,
                        kind="tie_probe",
                        condition=cond,
                        order=order,
                        winner=letter,
                        verdict=verdict,
                        label=label,
                    )
                )
    return out


def one_seed(seed: int, round_size: int, settings: ReportSettings) -> dict[str, dict[str, object]]:
    items = dataset(seed)
    order = stratified_order({i: sub for i, (sub, _) in items.items()}, seed)
    calls_per_item = 2 * (1 + len(TARGETS)) + 2  # both orders per condition, two zh tie-probes
    out: dict[str, dict[str, object]] = {}
    for k, (kind, scenario) in enumerate(KINDS.items()):
        s = load_scenario(scenario).model_copy(update={"seed": 1000 * seed + k})
        js = judgments(kind, s, items)
        analysis = analyze(js, settings=settings, condition_order=TARGETS)
        full = {v.condition: v.status for v in analysis.readiness}
        values = item_values(judgment_frame(js), TARGETS)
        path = settle(values, kind, TARGETS, settings, order, intervals=False)
        stop = len(order)
        if path.first_settled is not None:
            stop = min(len(order), math.ceil(path.first_settled / round_size) * round_size)
        if stop < len(order):
            seq = settle(values, kind, TARGETS, settings, order[:stop], intervals=False).verdicts
        else:
            seq = full  # the items ran out: the verdict is the full run's
        out[kind] = {
            "items": stop,
            "calls_ratio": stop * calls_per_item / (len(order) * calls_per_item),
            "full": full,
            "sequential": seq,
        }
    return out


def summarise(results: list[dict[str, dict[str, object]]]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        rows = [r[kind] for r in results]
        items = np.array([int(r["items"]) for r in rows])  # type: ignore[call-overload]
        ratios = np.array([float(r["calls_ratio"]) for r in rows])  # type: ignore[arg-type]
        decided = wrong = undecided = early_decisive = 0
        for r in rows:
            full, seq = r["full"], r["sequential"]
            assert isinstance(full, dict) and isinstance(seq, dict)
            for target, status in full.items():
                if status in ("pass", "fail"):
                    decided += 1
                    wrong += int(seq.get(target) not in (status,))
                    undecided += int(seq.get(target) == "inconclusive")
                elif seq.get(target) != "inconclusive":
                    early_decisive += 1
        table[kind] = {
            "seeds": len(rows),
            "calls_ratio_mean": float(ratios.mean()),
            "calls_ratio_p90": float(np.quantile(ratios, 0.9)),
            "stopped_early": float(np.mean(ratios < 1.0)),
            "items_median": float(np.median(items)),
            "full_decided": decided,
            "verdict_error_rate": wrong / decided if decided else 0.0,
            "decided_where_full_inconclusive": early_decisive,
        }
    return table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--round", type=int, default=10, help="items per round (default 10)")
    ap.add_argument("--bootstrap", type=int, default=200, help="bootstrap samples of the full run's verdict")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = ReportSettings(bootstrap_samples=args.bootstrap)
    results = [one_seed(seed, args.round, settings) for seed in range(args.seeds)]
    table = summarise(results)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    print(f"{args.seeds} seeds, 419 items, en+zh+ls, rounds of {args.round} items, alpha = 0.05")
    print(f"{'judge kind':<22} {'calls':>7} {'p90':>6} {'items':>6} {'early':>6} {'error':>7}  target")
    ok = True
    for kind, row in table.items():
        goal = TARGETS_MET.get(kind)
        met = goal is None or row["calls_ratio_mean"] <= goal
        met = met and row["verdict_error_rate"] <= 0.05
        ok = ok and met
        print(
            f"{kind:<22} {row['calls_ratio_mean']:>7.3f} {row['calls_ratio_p90']:>6.3f} "
            f"{row['items_median']:>6.0f} "
            f"{row['stopped_early']:>6.0%} {row['verdict_error_rate']:>7.1%}  "
            f"{'<= ' + format(goal, '.2f') if goal else 'may use all'} {'ok' if met else 'MISSED'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
