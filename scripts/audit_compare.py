"""How often `judgebench compare`'s gates fail an unchanged judge, and how often they catch a real drop
in accuracy, when run-to-run changes are item-level (seeded simulation, through the gate's own code).

Each replicate draws a pair of runs of one judge over ITEMS items x CONDITIONS x 2 orders and feeds
their paired units to `compare.drift.drift_rows` and `apply_gate`, as `compare` does. A unit is right
when its latent draw is below the run's accuracy; each item keeps one latent draw across its orders and
conditions, and each run redraws it with probability --item-change (the item moves everywhere at once,
as a judge update or a template edit moves it), then each unit with probability --unit-change (the
per-call sampling noise). Run B's accuracy is run A's minus DROP points (0: the same judge twice),
lost in one of two ways (--drop-levels): `item`, whole items (those whose latent draw falls between the
two accuracies go wrong in every order and condition: the hardest case for a test that counts items),
or `unit`, units one by one (each right unit of run B turned wrong with probability DROP / accuracy).

Printed per drop, over --reps replicates: the share of runs failed by
  - the McNemar gate (`--gate-mcnemar ALPHA`: the item-clustered test, BH over the gated rows),
  - the same gate on the unit-level exact McNemar test it replaced (for comparison),
  - the flip-rate gate (`--gate LIMIT`, on the interval's lower bound),
each with its 95% Wilson interval; at drop 0 that is the false-alarm rate, above 0 the power.

    python scripts/audit_compare.py [--items 419] [--conditions en,zh,ls] [--reps 200] [--seed 0]
        [--drops 0,2,5,10] [--drop-levels item,unit] [--accuracy 0.80] [--item-change 0.10]
        [--unit-change 0.03] [--alpha 0.05] [--limit 0.10] [--json]

The default (419 items as LLMBar; 200 replicates at drop 0, then at 2, 5 and 10 points each way: 1,400
pairs of runs) takes about 2 minutes of one core (107 s of CPU measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgebench.analysis.stats import bh_adjust, wilson
from judgebench.compare.compare_doc import Drift, GateSettings
from judgebench.compare.drift import apply_gate, drift_rows

ORDERS = ("orig", "swap")


@dataclass(frozen=True)
class Drift2Runs:
    """One simulated pair of runs: its size and how the runs differ."""

    items: int = 419
    conditions: tuple[str, ...] = ("en", "zh", "ls")
    accuracy: float = 0.80
    drop: float = 0.0  # run B's accuracy is accuracy - drop
    drop_level: str = "item"  # "item": whole items lose it; "unit": units one by one
    item_change: float = 0.10  # per run: an item's latent draw redrawn (all its units move together)
    unit_change: float = 0.03  # per run: a unit's draw redrawn (sampling noise of one call)


def correctness(rng: np.random.Generator, sim: Drift2Runs, reps: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Right (True) or wrong per replicate, item and unit (conditions x orders), in runs A and B:
    two boolean arrays of shape (reps, items, units per item)."""
    shape = (reps, sim.items, len(sim.conditions) * len(ORDERS))
    base = rng.random(shape[:2])
    out = []
    by_item = sim.drop_level == "item"
    for accuracy in (sim.accuracy, sim.accuracy - sim.drop if by_item else sim.accuracy):
        item = np.where(rng.random(shape[:2]) < sim.item_change, rng.random(shape[:2]), base)
        unit = np.where(rng.random(shape) < sim.unit_change, rng.random(shape), item[..., None])
        out.append(unit < accuracy)
    if not by_item and sim.drop:
        out[1] &= rng.random(shape) >= sim.drop / sim.accuracy
    return out[0], out[1]


def paired_units(right_a: np.ndarray, right_b: np.ndarray, sim: Drift2Runs) -> pd.DataFrame:
    """One replicate's runs as `compare.pairing.paired_units` lays them out (one judge, pairs only):
    labels alternate 1/2, a right answer is the label, a wrong one the other output."""
    items, per_item = right_a.shape
    item = np.repeat(np.arange(items), per_item)
    label = 1 + item % 2
    slot = np.tile(np.arange(per_item), items)
    order = np.array(ORDERS)[slot % len(ORDERS)]
    frame = {
        "judge_a": "sim:a", "judge_b": "sim:b",
        "item_id": item, "kind": "pair",  # ids as numbers: the drift code only groups by them
        "condition": np.array(sim.conditions)[slot // len(ORDERS)], "order": order,
        "subset": "Natural", "label": label.astype(float),
    }  # fmt: skip
    for side, right in (("a", right_a.ravel()), ("b", right_b.ravel())):
        verdict = np.where(right, label, 3 - label)
        frame[f"outcome_{side}"] = verdict.astype(str)
        frame[f"winner_{side}"] = np.where((verdict == 1) == (order == "orig"), "A", "B")
        frame[f"line_{side}"] = np.arange(len(item))
    return pd.DataFrame(frame)


def gate_failures(rows: list[Drift], alpha: float, limit: float) -> dict[str, bool]:
    """Whether each gate fails this pair of runs (the rows are copied: each gate marks its own)."""
    mcnemar = apply_gate([r.model_copy() for r in rows], GateSettings(mcnemar_alpha=alpha), 0.95)
    flip = apply_gate([r.model_copy() for r in rows], GateSettings(flip_rate=limit), 0.95)
    units_p = [r.mcnemar_p_units for r in rows if r.kind == "pair" and r.mcnemar_p_units is not None]
    return {
        "mcnemar_clustered": bool(mcnemar),
        "mcnemar_units": any(p < alpha for p in bh_adjust(units_p)),
        "flip": bool(flip),
    }


def audit(sim: Drift2Runs, reps: int, seed: int, alpha: float, limit: float) -> dict[str, float | int]:
    """Each gate's failure share over `reps` seeded replicates of `sim`, with Wilson bounds."""
    rng = np.random.default_rng(seed)
    right_a, right_b = correctness(rng, sim, reps)
    fails = {"mcnemar_clustered": 0, "mcnemar_units": 0, "flip": 0}
    flips = []
    for k in range(reps):
        rows = drift_rows(paired_units(right_a[k], right_b[k], sim), list(sim.conditions), 0.95)
        flips.append(next(r.flip_rate or 0.0 for r in rows if r.condition == "all"))
        for gate, failed in gate_failures(rows, alpha, limit).items():
            fails[gate] += failed
    out: dict[str, float | int] = {"drop": sim.drop, "reps": reps, "mean_flip_rate": float(np.mean(flips))}
    for gate, count in fails.items():
        low, high = wilson(count, reps)
        out[gate] = count / reps
        out[f"{gate}_low"], out[f"{gate}_high"] = float(low[0]), float(high[0])
    return out


def _args(argv: list[str] | None) -> argparse.Namespace:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 1)[1])
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--items", type=int, default=419, help="items per run (default 419, LLMBar's)")
    parser.add_argument("--conditions", default="en,zh,ls", help="conditions, comma-separated")
    parser.add_argument("--reps", type=int, default=200, help="replicates per drop (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first drop; drop k uses seed + k")
    parser.add_argument("--drops", default="0,2,5,10", help="accuracy drops in points (default 0,2,5,10)")
    parser.add_argument("--drop-levels", default="item,unit", help="how B loses accuracy: item, unit")
    parser.add_argument("--accuracy", type=float, default=0.80, help="run A's accuracy (default 0.80)")
    parser.add_argument("--item-change", type=float, default=0.10, help="item-level redraw per run")
    parser.add_argument("--unit-change", type=float, default=0.03, help="unit-level redraw per run")
    parser.add_argument("--alpha", type=float, default=0.05, help="--gate-mcnemar level (default 0.05)")
    parser.add_argument("--limit", type=float, default=0.10, help="--gate flip-rate limit (default 0.10)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON lines")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    conditions = tuple(c.strip() for c in args.conditions.split(",") if c.strip())
    drops = [float(x) for x in args.drops.split(",")]
    print(
        f"# {args.items} items x {len(conditions)} conditions x 2 orders, accuracy {args.accuracy:.2f}, "
        f"item-level change {args.item_change}, unit-level {args.unit_change}, {args.reps} reps, "
        f"seed {args.seed}; gates: --gate-mcnemar {args.alpha}, --gate {args.limit}",
        flush=True,
    )
    start = time.perf_counter()
    levels = [x.strip() for x in args.drop_levels.split(",") if x.strip()]
    scenarios = [(drop, level) for drop in drops for level in (levels[:1] if drop == 0 else levels)]
    for k, (drop, level) in enumerate(scenarios):
        sim = Drift2Runs(
            items=args.items, conditions=conditions, accuracy=args.accuracy, drop=drop / 100,
            drop_level=level, item_change=args.item_change, unit_change=args.unit_change,
        )  # fmt: skip
        result = audit(sim, args.reps, args.seed + k, args.alpha, args.limit)
        if args.json:
            print(json.dumps({**result, "drop_level": level}), flush=True)
            continue
        what = "false alarms" if drop == 0 else f"power at a {drop:g}-point drop by {level}"
        cells = [
            f"{name} {result[key]:.1%} [{result[f'{key}_low']:.1%}, {result[f'{key}_high']:.1%}]"
            for name, key in (
                ("McNemar gate (item-clustered)", "mcnemar_clustered"),
                ("unit-level McNemar (old)", "mcnemar_units"),
                (f"flip gate {args.limit:g}", "flip"),
            )
        ]
        print(f"{what} (mean flip rate {result['mean_flip_rate']:.1%}): " + "; ".join(cells), flush=True)
    print(f"# {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
