"""What a calibration runs on: a Judge-LS run, a scores table or an arena-hard-auto folder, each as
ScoreSets and calibrated by `engine.run_bbe`; plus the pure steps of re-judged perturbation
neighbours (which units to perturb, and their answers as neighbour pairs). Making the calls is the
api layer's job (`judgebench.api.bbe`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgebench.bbe.engine import BBEParams, BBERun, Bridge, run_bbe
from judgebench.bbe.schematic import SchematicFit, schematic_sensitivity
from judgebench.bbe.scores import ScoreSet, UnitScoreMode, load_run, unit_score
from judgebench.bbe.tables import factor_columns, load_arena_hard, read_table, scoreset_from_table
from judgebench.errors import ConfigError, InputError
from judgebench.records import Judgment, UnitKey
from judgebench.store.run_folder import RunDir


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


def sample_units(ss: ScoreSet, units: int | None, seed: int) -> list[UnitKey]:
    """The (item, order) units of a Judge-LS set to perturb: all, or `units` of them drawn by seed."""
    rng = np.random.default_rng([seed, 7])
    chosen = np.arange(len(ss.unit_keys))
    if units is not None and units < len(ss.unit_keys):
        chosen = np.sort(rng.choice(len(ss.unit_keys), size=units, replace=False))
    return [ss.unit_keys[int(i)] for i in chosen]


def with_perturbation_pairs(
    ss: ScoreSet, judgments: Iterable[Judgment], *, kind: str, judge: str, units: Sequence[UnitKey]
) -> ScoreSet:
    """The set plus one neighbour pair of kind `kind` per re-judged unit among `units` (the newest
    answer per call key; an invalid or missing answer is counted as an invalid neighbour)."""
    use_probs = ss.score_source == "probabilities"
    position = {key: i for i, key in enumerate(ss.unit_keys)}
    wanted = set(units)
    unit_idx: list[int] = []
    scores: list[float | None] = []
    for j in judgments:
        key = UnitKey(j.item_id, j.order)
        if j.judge != judge or j.kind != "pair" or j.condition != kind or key not in wanted:
            continue
        unit_idx.append(position[key])
        scores.append(unit_score(j, use_probs=use_probs))
    return ss.add_pairs(unit_idx, [kind] * len(unit_idx), scores)


def with_repeats(ss: ScoreSet, units: Sequence[UnitKey], repeated: Iterable[Judgment]) -> ScoreSet:
    """The set with its repeated judgments (PROTOCOL §5's jitter): each unit's base score, then every
    valid re-ask of the identical input of `units` (`repeated`, the re-asks' judgments)."""
    position = {key: i for i, key in enumerate(ss.unit_keys)}
    use_probs = ss.score_source == "probabilities"
    rep_unit = [position[u] for u in units]
    rep_score = [float(ss.base[position[u]]) for u in units]
    for j in repeated:
        score = unit_score(j, use_probs=use_probs)
        key = UnitKey(j.item_id, j.order)
        if score is not None and key in position:
            rep_unit.append(position[key])
            rep_score.append(score)
    return dataclasses.replace(
        ss,
        repeat_unit=np.asarray(rep_unit, dtype=np.int64),
        repeat_score=np.asarray(rep_score, dtype=np.float64),
    )


def fresh_changes(
    ss: ScoreSet, judgments: Iterable[Judgment], *, kind: str, units: Sequence[UnitKey]
) -> np.ndarray:
    """`--verify-kind fresh`: how far each freshly judged neighbour moved its unit's score."""
    fresh = with_perturbation_pairs(ss.only_kinds(set()), judgments, kind=kind, judge=ss.name, units=units)
    return np.abs(fresh.pair_score - fresh.base[fresh.pair_unit])


def bbe_from_run(
    run: RunDir | Path,
    params: BBEParams,
    *,
    unit_score_mode: UnitScoreMode = "auto",
    neighbours: list[str] | None = None,
) -> BBERun:
    """A Judge-LS run: one calibration per judge; systems are the judges, aggregate = accuracy."""
    loaded = load_run(run, mode=unit_score_mode)
    source: dict[str, Any] = {"type": "run", "path": str(run), "unit_score": unit_score_mode}
    return calibrate_sets(loaded.sets, params, neighbours=neighbours, source=source, skipped=loaded.skipped)


def calibrate_sets(
    sets: list[ScoreSet],
    params: BBEParams,
    *,
    neighbours: list[str] | None,
    source: dict[str, Any],
    skipped: dict[str, str] | None = None,
) -> BBERun:
    """Judge-LS sets (each judge a system), restricted to the given neighbour kinds, calibrated."""
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


def bbe_from_bridge(
    run: RunDir | Path,
    judge: str,
    table: Path,
    scale: tuple[float, float],
    params: BBEParams,
    *,
    unit_score_mode: UnitScoreMode = "auto",
) -> BBERun:
    """The bridge (PROTOCOL §5b): calibrate on judge `judge`'s language and order neighbours in a
    Judge-LS run and release the systems table it scored (a language-bias-bounded leaderboard). The
    changes transfer in normalised units (a run's unit score is P(output_1 preferred) in [0, 1]; the
    table's scores are divided by its declared range); the transfer assumption is in bbe.json."""
    loaded = load_run(run, mode=unit_score_mode, judges=[judge])
    reference = loaded.sets[0] if loaded.sets else None
    if reference is None or len(reference.pair_unit) == 0:
        why = loaded.skipped.get(judge, "no valid neighbour pair")
        raise InputError(f"--calibrate-from: judge '{judge}' cannot calibrate ({why})", path=str(run))
    frame = read_table(table)
    main = scoreset_from_table(frame, scale, name=judge, path=table)
    source = {
        "type": "scores",
        "path": str(table),
        "scale": list(scale),
        "calibrated_from": {"run": str(run), "judge": judge, "pairs": len(reference.pair_unit)},
    }
    bridge = Bridge(reference, str(run), judge)
    return run_bbe([main], params, systems_across_sets=False, source=source, bridge=bridge)
