"""The `bbe` stage as a library call: load a source, calibrate, write bbe.json, the scores and the plot.

`judgebench bbe` and `judgebench run` both call `bbe_from_run`, `bbe_from_table` or `bbe_from_arena_hard`,
then `write_outputs`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgebench.bbe.engine import BBEParams, BBERun, run_bbe
from judgebench.bbe.neighbours import NEIGHBOURS_FILE, perturb_run
from judgebench.bbe.schematic import SchematicFit, schematic_sensitivity
from judgebench.bbe.scores import (
    ScoreSet,
    UnitScoreMode,
    factor_columns,
    load_arena_hard,
    load_run,
    read_table,
    scoreset_from_table,
    unit_score,
)
from judgebench.errors import ConfigError, InputError
from judgebench.records import Judgment
from judgebench.rundir import BBE_JSON, last_per_key, read_jsonl


@dataclass
class PerturbRequest:
    """`--perturb KIND --model M`: re-judge a sample of M's en units with one perturbation each."""

    kind: str
    model: str
    units: int | None = 200
    items: dict[str, Any] = field(default_factory=dict)  # item id -> Item
    options: Any = None  # judgebench.api.CallOptions
    template: str | None = None


def _filter(sets: list[ScoreSet], kinds: list[str] | None) -> list[ScoreSet]:
    if not kinds:
        return sets
    wanted = set(kinds)
    available = {k for s in sets for k in (*s.pair_kind, *s.invalid_kind)}
    unknown = wanted - available
    if unknown:
        raise ConfigError(
            f"--neighbours: no neighbour of kind {', '.join(sorted(unknown))}; available: "
            f"{', '.join(sorted(available)) or 'none'}"
        )
    return [s.only_kinds(wanted) for s in sets]


def _perturbed(run: Path, ss: ScoreSet, req: PerturbRequest, seed: int) -> tuple[ScoreSet, dict[str, Any]]:
    """Add re-judged perturbation neighbours of kind `req.kind` to the judge's set."""
    keys = [tuple(u.rsplit("|", 1)) for u in ss.units]
    rng = np.random.default_rng([seed, 7])
    chosen = np.arange(len(keys))
    if req.units is not None and req.units < len(keys):
        chosen = np.sort(rng.choice(len(keys), size=req.units, replace=False))
    units = [(keys[i][0], keys[i][1]) for i in chosen]
    outcome = perturb_run(
        run,
        kind=req.kind,
        model=req.model,
        items=req.items,
        units=units,
        seed=seed,
        options=req.options,
        template_path=req.template,
    )
    # the newest answer per call key in the neighbours file (this run's answers included)
    latest = last_per_key(read_jsonl(run / NEIGHBOURS_FILE, Judgment), key=lambda j: j.call_key())
    use_probs = ss.score_source == "probabilities"
    index = {(keys[i][0], keys[i][1]): int(i) for i in chosen}
    unit_idx: list[int] = []
    kinds: list[str] = []
    scores: list[float | None] = []
    for (judge, item_id, kind, condition, order), j in latest.items():
        if judge != req.model or kind != "pair" or condition != req.kind or (item_id, order) not in index:
            continue
        unit_idx.append(index[(item_id, order)])
        kinds.append(req.kind)
        scores.append(unit_score(j, use_probs=use_probs))
    info = {
        "kind": req.kind,
        "model": req.model,
        "units_sampled": len(units),
        "requested": outcome.requested,
        "failed_calls": outcome.failed,
        "unperturbable": outcome.unperturbable,
        "file": str(run / NEIGHBOURS_FILE),
    }
    return ss.add_pairs(unit_idx, kinds, scores), info


def bbe_from_run(
    run: Path,
    params: BBEParams,
    *,
    unit_score_mode: UnitScoreMode = "auto",
    neighbours: list[str] | None = None,
    perturb: PerturbRequest | None = None,
) -> BBERun:
    """A Judge-LS run: one calibration per judge; systems are the judges, aggregate = accuracy."""
    sets, skipped = load_run(run, mode=unit_score_mode)
    source: dict[str, Any] = {"type": "run", "path": str(run), "unit_score": unit_score_mode}
    if perturb is not None:
        names = [s.name for s in sets]
        if perturb.model not in names:
            raise ConfigError(
                f"--model {perturb.model} is not a judge of this run; judges: {', '.join(names)}"
            )
        i = names.index(perturb.model)
        sets[i], source["perturbation"] = _perturbed(run, sets[i], perturb, params.seed)
        sets = [sets[i]]
        neighbours = neighbours or [perturb.kind]
    sets = _filter(sets, neighbours)
    source["neighbours"] = neighbours or "all"
    return run_bbe(sets, params, systems_across_sets=True, source=source, systems_skipped=skipped)


def _schematic(
    frame: Any, factors: list[str], scale: tuple[float, float], factor_scale: tuple[float, float]
) -> SchematicFit | None:
    """Fit overall ~ poly2(factors) on the first base row of each unit with every value present."""
    if not factors:
        return None
    base = frame[frame["context"] == "base"].drop_duplicates(subset=["system", "unit"], keep="first")
    rows = base[[*factors, "score"]].apply(pd.to_numeric, errors="coerce").dropna()
    if len(rows) < 3:
        return None
    lo, hi = scale
    flo, fhi = factor_scale
    x = (rows[factors].to_numpy(dtype=float) - flo) / (fhi - flo)
    y = (rows["score"].to_numpy(dtype=float) - lo) / (hi - lo)
    return schematic_sensitivity(x, y, tuple(factors))


def bbe_from_table(
    path: Path,
    scale: tuple[float, float],
    params: BBEParams,
    *,
    judge: str | None = None,
    neighbours: list[str] | None = None,
    factor_scale: tuple[float, float] | None = None,
) -> BBERun:
    """A scores table (system, unit, context, score [+ factor columns]): one calibration of the overall
    score (schematic sensitivity combined in when factors exist) and one per factor alongside."""
    frame = read_table(path)
    name = judge or path.stem
    factors = factor_columns(frame)
    main = scoreset_from_table(frame, scale, name=name, path=path)
    fscale = factor_scale or scale
    factor_sets = [
        scoreset_from_table(frame, fscale, name=f"{name}:{f}", column=f, path=path) for f in factors
    ]
    main_l = _filter([main], neighbours) if neighbours else [main]
    try:
        fit = _schematic(frame, factors, scale, fscale)
    except ValueError as exc:
        raise InputError(f"schematic fit: {exc}", path=str(path)) from exc
    source = {
        "type": "scores",
        "path": str(path),
        "scale": list(scale),
        "factors": factors,
        "factor_scale": list(fscale),
    }
    return run_bbe(
        main_l,
        params,
        systems_across_sets=False,
        schematic=fit,
        factor_sets=factor_sets,
        source=source,
    )


def bbe_from_arena_hard(folder: Path, params: BBEParams, *, baseline: str | None = None) -> BBERun:
    """An arena-hard-auto judgment folder: Likert 1-5 per (model, question) from game 1, game 2 as its
    swap neighbour; systems = models."""
    ss = load_arena_hard(folder, baseline=baseline)
    source = {"type": "arena-hard", "path": str(folder), "scale": [1, 5], "baseline_excluded": baseline}
    return run_bbe([ss], params, systems_across_sets=False, source=source)


def default_out(*, run: Path | None = None, scores: Path | None = None, arena: Path | None = None) -> Path:
    """INTERFACE: into the run folder, or beside the scores file (arena-hard: into its folder)."""
    if run is not None:
        return run / BBE_JSON
    if scores is not None:
        return scores.parent / BBE_JSON
    if arena is not None:
        return arena / BBE_JSON
    raise ConfigError("give --run DIR, --scores FILE --scale MIN MAX, or --arena-hard DIR")


def write_outputs(result: BBERun, out: Path, *, plot: bool = True) -> dict[str, str]:
    """bbe.json, `<stem>_scores.csv` (per unit raw and bias-bounded) and `<stem>.png` beside it."""
    from judgebench.bbe.plot import plot_bbe
    from judgebench.rundir import atomic_write_json, atomic_write_text

    out.parent.mkdir(parents=True, exist_ok=True)
    scores_path = out.with_name(out.stem + "_scores.csv")
    outputs = {"bbe_json": str(out), "scores_csv": str(scores_path)}
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(
        ["calibration", "system", "unit", "raw", "raw_normalised", "bias_bounded_normalised", "bias_bounded"]
    )
    for o in result.outputs + result.factor_outputs:
        ss = o.scores
        raw = ss.denormalise(ss.base)
        bb = ss.denormalise(o.bias_bounded) if o.bias_bounded is not None else None
        for i in range(len(ss)):
            writer.writerow(
                [
                    ss.name,
                    ss.systems[i],
                    ss.units[i],
                    f"{raw[i]:.6g}",
                    f"{ss.base[i]:.6g}",
                    "" if o.bias_bounded is None else f"{o.bias_bounded[i]:.6g}",
                    "" if bb is None else f"{bb[i]:.6g}",
                ]
            )
    atomic_write_text(scores_path, buf.getvalue())
    if plot:
        png = out.with_suffix(".png")
        rows = result.result.systems
        plot_bbe(
            png,
            [(o.scores, o.bias_bounded) for o in result.outputs],
            rows,
            title=f"A-BB (tau={result.result.tau}, delta={result.result.delta})",
        )
        outputs["plot"] = str(png)
    result.result.outputs = outputs
    atomic_write_json(out, result.result.to_json_dict())
    return outputs
