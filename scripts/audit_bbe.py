"""Re-measure two claims of `judgebench bbe` by seeded simulation (issue 40), and print the figures.

1. Verification's stated power. A release whose true violation probability is m x delta (m = 1, 1.5,
   2) is verified as `bbe --verify K` verifies it (bbe/verify.py's `check_release`: the redraw of the
   released sigma on its own neighbours, and the holdout: the same rule on half the items, its exact
   violation probability averaged on the other half's neighbours). The rule planted is a fixed sigma
   (as a stated `--sensitivity` gives: the same sigma on any half), tuned so that the release's exact
   violation probability on its own neighbours is m x delta; the holdout half's rate then averages
   m x delta and varies with the split. Printed: the P(fail) bbe.json states (`verify.power`, averaged
   over the verifications: the holdout's part depends on the data) beside the simulated share of
   failed verifications, and what was stated before issue 40 (one Wilson test's power).
2. Carry-over on shared questions. S systems answer the same Q questions of a scores table (Likert
   1-5); a question's neighbour (a formatting change) moves the systems' scores on it at that
   question's own latent rate (6% of questions are broken: 90% of the systems move to the other end
   of the scale), so rows of one question are correlated. Each context is calibrated as
   `bbe --scores` does by default (`--alpha auto`, `--certificate auto`), once with the rows as their own
   clusters (before issue 40) and once clustered by question (now); the release's true violation
   probability on new questions drawn from the population is computed exactly (PROTOCOL §5b's
   noncentral chi-square). Printed: the share of contexts above delta and the worst multiple of delta.

Usage: python scripts/audit_bbe.py [--seed 40] [--reps 600] [--contexts 300] [--systems 20]
       [--questions 30] [--items 400] [--draws 2000]
Defaults take about 30 s of CPU on one core (3.7 minutes of wall time on a 2-core machine at load 12).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgebench.bbe.certificates import distinct_changes, exact_sigma, exact_violation
from judgebench.bbe.choice import choose, context
from judgebench.bbe.params import BBEParams
from judgebench.bbe.scores import ScoreSet, ScoreSetBuilder
from judgebench.bbe.tables import scoreset_from_table
from judgebench.bbe.verify import HalfCalibration, Tested, VerifySpec, check_release, power

TAU, DELTA = 0.5, 0.01
MULTIPLES = (1.0, 1.5, 2.0)
FloatArray = NDArray[np.float64]

# --- 1. verification's power ------------------------------------------------------------------------

ITEM_RATES = np.array([0.02, 0.15, 0.6])  # an item's latent change rate, and the shares of items
ITEM_SHARES = np.array([0.7, 0.25, 0.05])
PAIRS_PER_UNIT = 3  # Judge-LS: two other conditions and the other order; two units (orders) per item


def judge_ls_set(rng: np.random.Generator, items: int) -> ScoreSet:
    """A Judge-LS-like set: two units per item (one cluster), three neighbours each, changes 0 / 0.5 / 1
    at the item's latent rate (an item's neighbours are correlated)."""
    b = ScoreSetBuilder()
    rate = ITEM_RATES[rng.choice(len(ITEM_RATES), size=items, p=ITEM_SHARES)]
    for i in range(items):
        for order in ("orig", "swap"):
            base = float(rng.integers(0, 2))
            idx = b.add_unit("judge", f"{i}|{order}", base, group=str(i))
            for k in range(PAIRS_PER_UNIT):
                moved = rng.random() < rate[i]
                step = 1.0 if rng.random() < 0.7 else 0.5
                b.add_pair(idx, f"n{k}", abs(base - step) if moved else base)
    return b.build("judge", (0.0, 1.0), aggregate="mean", score_source="verdict", declared_d=2 * items)


def _verify_once(
    ss: ScoreSet, sigma: float, alpha: float, draws: int, seed: int
) -> tuple[bool, dict[str, float]]:
    spec = VerifySpec(TAU, DELTA, draws, seed, 0, "holdout")
    tested = Tested("planted", "out_of_sample", alpha, sigma)

    def same_rule(mask: NDArray[np.bool_]) -> HalfCalibration:  # a stated sensitivity: the same sigma
        return HalfCalibration("planted", 0.0, alpha, sigma, int(np.sum(~mask)))

    block = check_release(ss, spec, tested, d=len(ss), recalibrate=same_rule)
    assert block.passed is not None
    return not block.passed, block.power


def audit_power(
    *, seed: int, items: int, reps: int, draws: int, contexts: int = 10
) -> list[tuple[float, float, float]]:
    """(m, stated P(fail) averaged over the verifications, simulated P(fail)) at each multiple."""
    rng = np.random.default_rng([seed, 1])
    sets = [judge_ls_set(rng, items) for _ in range(contexts)]
    alpha = 0.3
    out = []
    for m in MULTIPLES:
        fails, stated = 0, []
        for c, ss in enumerate(sets):
            changes = np.abs(ss.pair_score - ss.base[ss.pair_unit])
            values, shares = distinct_changes(changes)
            sigma = exact_sigma(values, shares, alpha=alpha, tau=TAU, d=len(ss), delta=m * DELTA)
            assert sigma is not None
            for r in range(reps // contexts):
                failed, power = _verify_once(ss, sigma, alpha, draws, seed * 100_003 + c * 10_007 + r)
                fails += failed
                stated.append(power[f"{m:g}x"])  # it depends on the held-out items' spread: averaged
        out.append((m, float(np.mean(stated)), fails / len(stated)))
    return out


# --- 2. carry-over on shared questions ------------------------------------------------------------

# question kinds: sturdy questions (base scores 1-5) move a system's score rarely and by a step or two;
# broken ones (the systems score them 1 or 5, and a formatting change breaks the question for every
# system) send 90% of the systems to the other end of the scale
Q_RATES = np.array([0.03, 0.9])  # a question kind's rate of moving a system's score ...
Q_SHARES = np.array([0.94, 0.06])  # ... and the share of questions of that kind
STURDY_STEPS = (1, 2)  # Likert steps of a sturdy question's move, and their shares
STURDY_STEP_SHARES = np.array([0.7, 0.3])


def moved(base: int, step: int) -> int:
    """A Likert score moved by `step` (up, else down, else as far as the scale allows)."""
    if base + step <= 5:
        return base + step
    return base - step if base - step >= 1 else (1 if base - 1 >= 5 - base else 5)


def population() -> tuple[FloatArray, FloatArray]:
    """The change of a new neighbour (a new question, a random system): normalised sizes 0, 0.25, ...,
    1 and their exact shares."""
    shares = np.zeros(5)
    sturdy, broken = Q_SHARES
    shares[0] += sturdy * (1.0 - Q_RATES[0]) + broken * (1.0 - Q_RATES[1])
    for step, p in zip(STURDY_STEPS, STURDY_STEP_SHARES, strict=True):
        for base in range(1, 6):  # uniform base score
            shares[abs(moved(base, step) - base)] += sturdy * Q_RATES[0] * p / 5.0
    shares[4] += broken * Q_RATES[1]
    return np.arange(5) / 4.0, shares


def shared_rows(
    rng: np.random.Generator, systems: int, questions: int
) -> list[tuple[str, str, float, float]]:
    """(system, question, base, neighbour) Likert scores 1-5 of one context."""
    kind = rng.choice(len(Q_RATES), size=questions, p=Q_SHARES)
    rows = []
    for s in range(systems):
        for q in range(questions):
            move = rng.random() < Q_RATES[kind[q]]
            if kind[q] == 0:
                base = int(rng.integers(1, 6))
                nb = moved(base, int(rng.choice(STURDY_STEPS, p=STURDY_STEP_SHARES)))
            else:
                base = int(rng.choice((1, 5)))
                nb = 6 - base
            rows.append((f"s{s}", f"q{q}", float(base), float(nb if move else base)))
    return rows


def shared_table(rng: np.random.Generator, systems: int, questions: int) -> ScoreSet:
    """A scores table's set as `bbe --scores` builds it (bbe/tables.py), clustered by question."""
    rows = shared_rows(rng, systems, questions)
    frame = pd.DataFrame(
        [(s, q, "base", b) for s, q, b, _ in rows] + [(s, q, "formatting", n) for s, q, _, n in rows],
        columns=["system", "unit", "context", "score"],
    )
    return scoreset_from_table(frame, (1.0, 5.0), name="table", path=Path("simulated.csv"))


def true_violation(ss: ScoreSet, params: BBEParams) -> float:
    """The default release's violation probability on new neighbours drawn from the population."""
    ctx = context(ss, params, 0, None, None)
    pick = choose(ctx, ctx.pairs_set, alpha=params.alpha)
    assert pick.sigma is not None
    values, shares = population()
    return exact_violation(values, shares, alpha=pick.alpha, sigma=pick.sigma, tau=TAU, d=ctx.d)


def audit_shared(*, seed: int, contexts: int, systems: int, questions: int) -> dict[str, FloatArray]:
    params = BBEParams(tau=TAU, delta=DELTA, alpha=None)  # bbe's defaults: --alpha auto, certificate auto
    rng = np.random.default_rng([seed, 2])
    rows: dict[str, list[float]] = {"rows as clusters (before)": [], "question clusters (now)": []}
    for _ in range(contexts):
        ss = shared_table(rng, systems, questions)
        rows["rows as clusters (before)"].append(
            true_violation(dataclasses.replace(ss, group_index=None), params)
        )
        rows["question clusters (now)"].append(true_violation(ss, params))
    return {k: np.asarray(v) for k, v in rows.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=40, help="seed of every draw (default 40)")
    ap.add_argument("--reps", type=int, default=600, help="verifications per multiple of delta (default 600)")
    ap.add_argument("--items", type=int, default=400, help="items of each verified context (default 400)")
    ap.add_argument("--draws", type=int, default=2000, help="--verify K of each verification (default 2000)")
    ap.add_argument("--contexts", type=int, default=300, help="shared-question contexts (default 300)")
    ap.add_argument("--systems", type=int, default=20, help="systems per table (default 20)")
    ap.add_argument("--questions", type=int, default=30, help="shared questions per table (default 30)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(
        f"1. verify's power: {args.reps} verifications per multiple, {args.items} items, "
        f"--verify {args.draws}"
    )
    print("   m x delta | stated P(fail) | simulated P(fail) | |difference| | stated before issue 40")
    worst = 0.0
    before = power(args.draws, DELTA)  # one Wilson test's binomial power, stated for both parts together
    for m, stated, simulated in audit_power(
        seed=args.seed, items=args.items, reps=args.reps, draws=args.draws
    ):
        worst = max(worst, abs(stated - simulated))
        print(
            f"   {m:9g} | {stated:14.3f} | {simulated:17.3f} | {abs(stated - simulated):12.3f} | "
            f"{before[f'{m:g}x']:.3f}"
        )
    print(f"   largest difference {worst:.3f} (target <= 0.05)")
    print(
        f"2. shared questions: {args.contexts} contexts of {args.systems} systems x {args.questions} "
        "questions, "
        "default release (--alpha auto, --certificate auto)"
    )
    for name, v in audit_shared(
        seed=args.seed, contexts=args.contexts, systems=args.systems, questions=args.questions
    ).items():
        above = int(np.sum(v > DELTA))
        print(
            f"   {name}: {above}/{len(v)} contexts above delta ({above / len(v):.1%}), worst "
            f"{np.max(v) / DELTA:.2f} delta, median {np.median(v) / DELTA:.2f} delta"
        )
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
