"""The tool's calibration on the released judgments of Trust or Escalate (Jung et al. 2024; reference
code jaehunjung1/cascaded-selective-evaluation), split in two as the reference splits its data: the
items shuffled (random.Random(seed).shuffle over their sorted keys), the first half calibrates, the
second half is judged. Prints per split and on average each stage's threshold, the coverage, the share
each judge decides and the agreement with the human label on the judged half.

The reference's files are not part of this project: fetch the repository and pass the folder holding
result/<judge>.calibration.jsonl (only the calibration judgments are released: 500 items, each judged
by mistral-7b-instruct, gpt-3.5-turbo and gpt-4-turbo with "simulated annotators" probabilities).
With --reference-results FILE (JSON lines {"seed", "lambdas", "composition", "agreement",
"coverage"} from running the reference's own CascadedClassifier on the same splits, seeds 0..N-1),
its figures are printed beside the tool's.

    python scripts/compare_selective_reference.py --reference DIR [--splits 40] [--alpha 0.15]
        [--delta 0.1] [--reference-results FILE]
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np

from judgebench.selective import calibrate_cascade, upper_bound
from judgebench.selective.calibrate import keeps

JUDGES = ("mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo")


def load(folder: Path) -> tuple[list[str], dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """Item keys (sorted), per judge its confidence (the largest probability) and verdict, and the
    humans' majority label, over the items every judge judged."""
    rows: dict[str, dict[str, dict[str, object]]] = {}
    for judge in JUDGES:
        with open(folder / "result" / f"{judge}.calibration.jsonl", encoding="utf-8") as fh:
            for line in fh:
                sample = json.loads(line)
                rows.setdefault(f"{sample['instruction']}-{sample['outputs']}", {})[judge] = sample
    keys = sorted(k for k, by in rows.items() if len(by) == len(JUDGES))
    conf = {j: np.array([max(rows[k][j]["probs"]) for k in keys]) for j in JUDGES}  # type: ignore[type-var]
    verdict = {j: np.array([int(np.argmax(rows[k][j]["probs"])) + 1 for k in keys]) for j in JUDGES}  # type: ignore[arg-type]
    first = JUDGES[0]
    human = np.array(
        [Counter(rows[k][first]["preferences"].values()).most_common(1)[0][0] for k in keys]  # type: ignore[union-attr]
    )
    return keys, conf, verdict, human


def _reference_bound(c: np.ndarray, w: np.ndarray, lam: np.float32, delta: float) -> float:
    """util.SelectiveClassificationUtil.selective_risk_upper_bound, in float32 as torch computes it:
    the root of BinomCDF(risk * n; n, r) = delta (scipy's binom.cdf floors a non-integer count)."""
    kept = c >= lam
    n = np.float32(kept.sum())
    k = np.float32(w[kept].sum()) / n * n
    return float(upper_bound(np.floor(k), n, delta)[()])


def reference_threshold(c: np.ndarray, w: np.ndarray, alpha: float, delta: float) -> float | None:
    """SelectiveClassificationUtil.lambda_hat as released: a grid of 5000 thresholds keeping >= 30 items;
    if the highest fails it is returned all the same; else down in steps of 1 / (grid size kept) until
    the next step fails; None where no grid point keeps 30 (the caller reuses the previous judge's)."""
    grid = np.linspace(0, 1, 5000, dtype=np.float32)
    lambdas = [lam for lam in grid if (c >= lam).sum() >= 30]
    if not lambdas:
        return None
    if _reference_bound(c, w, lambdas[-1], delta) > alpha:
        return float(lambdas[-1])
    for lam in reversed(lambdas):
        if _reference_bound(c, w, np.float32(lam - 1 / len(lambdas)), delta) > alpha:
            return float(lam)
    return float(lambdas[0])


def _halves(keys: list[str], seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = list(keys)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    position = {k: i for i, k in enumerate(keys)}
    return np.array([position[k] for k in order[:half]]), np.array([position[k] for k in order[half:]])


def reference_split(data: tuple, seed: int, alpha: float, delta: float) -> list[float]:  # type: ignore[type-arg]
    """The reference's cascade calibration (CascadedClassifier.calibrate) on one split's first half."""
    keys, conf, verdict, human = data
    cal, _ = _halves(keys, seed)
    done = np.zeros(len(cal), dtype=bool)
    out: list[float] = []
    for j in JUDGES:
        c = conf[j][cal].astype(np.float32)
        lam = reference_threshold(c[~done], (verdict[j][cal] != human[cal])[~done], alpha, delta)
        lam = out[-1] if lam is None else lam
        out.append(lam)
        done |= c >= np.float32(lam)
    return out


def one_split(
    data: tuple,  # type: ignore[type-arg]
    seed: int,
    alpha: float,
    delta: float,
    given: list[float] | None = None,
) -> dict[str, object]:
    """The tool's cascade calibrated on the first half (or the `given` thresholds, compared in float32
    as the reference does), judged on the second half."""
    keys, conf, verdict, human = data
    cal, test = _halves(keys, seed)
    if given is None:
        fits, _ = calibrate_cascade(
            [conf[j][cal] for j in JUDGES],
            [verdict[j][cal] != human[cal] for j in JUDGES],
            alpha=alpha,
            delta=delta,
        )
        thresholds = [float(f.threshold[0]) for f in fits]
    else:
        thresholds = given
    reach = np.ones(len(test), dtype=bool)
    decided, agree, share = 0, 0, {}
    for j, t in zip(JUDGES, thresholds, strict=True):
        c = conf[j][test] if given is None else conf[j][test].astype(np.float32)
        takes = reach & keeps(c, np.array([t], dtype=c.dtype))[0]
        share[j] = int(takes.sum())
        decided += int(takes.sum())
        agree += int((takes & (verdict[j][test] == human[test])).sum())
        reach &= ~takes
    return {
        "seed": seed,
        "thresholds": [None if np.isnan(t) else float(t) for t in thresholds],
        "coverage": decided / len(test),
        "agreement": agree / decided if decided else None,
        "composition": {j: n / decided if decided else 0.0 for j, n in share.items()},
    }


def _mean(values: list[float | None]) -> str:
    seen = [v for v in values if v is not None]
    return f"{np.mean(seen):.3f}" if seen else "-"


def _below(rows: list[dict[str, object]], alpha: float) -> int:
    seen = [r["agreement"] for r in rows if r["agreement"] is not None]
    return sum(1 for a in seen if float(a) < 1 - alpha)  # type: ignore[arg-type]


def summary(name: str, rows: list[dict[str, object]], alpha: float = 0.15) -> None:
    lam = [r.get("thresholds", r.get("lambdas")) for r in rows]
    per_stage = [_mean([t[k] for t in lam]) for k in range(len(JUDGES))]  # type: ignore[index]
    comp = [_mean([r["composition"][j] for r in rows]) for j in JUDGES]  # type: ignore[index]
    print(
        f"{name:<28} thresholds {' / '.join(per_stage)}  coverage {_mean([r['coverage'] for r in rows])}  "  # type: ignore[misc]
        f"agreement {_mean([r['agreement'] for r in rows])}  decided by {' / '.join(comp)}  "  # type: ignore[misc]
        f"below 1 - alpha in {_below(rows, alpha)} of {len(rows)} test halves"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", type=Path, required=True, help="the reference repository's folder")
    ap.add_argument("--splits", type=int, default=40, help="random half/half splits, seeds 0..N-1")
    ap.add_argument("--alpha", type=float, default=0.15)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--reference-results", type=Path, default=None)
    args = ap.parse_args()
    data = load(args.reference)
    print(f"{len(data[0])} items judged by {', '.join(JUDGES)}; {args.splits} half/half splits")
    paper = [one_split(data, s, args.alpha, args.delta) for s in range(args.splits)]
    split = [one_split(data, s, args.alpha, args.delta / len(JUDGES)) for s in range(args.splits)]
    summary("tool, each stage at delta", paper)
    summary("tool, delta split (default)", split)
    rule = [reference_split(data, s, args.alpha, args.delta) for s in range(args.splits)]
    summary("reference rule (re-run here)", [one_split(data, s, 0, 0, t) for s, t in enumerate(rule)])
    if args.reference_results is not None:
        lines = args.reference_results.read_text(encoding="utf-8").splitlines()
        ref = [json.loads(line) for line in lines if line.strip()][: args.splits]
        summary(f"reference code ({len(ref)} splits)", ref)
        seeds = {x["seed"] for x in ref}
        summary("reference rule, same splits", [one_split(data, s, 0, 0, rule[s]) for s in sorted(seeds)])
        summary("tool at delta, same splits", [r for r in paper if r["seed"] in seeds])
        gap = max(abs(a - b) for x in ref for a, b in zip(x["lambdas"], rule[x["seed"]], strict=True))
        print(f"largest gap between the reference code's thresholds and the rule re-run here: {gap:.2e}")


if __name__ == "__main__":
    main()
