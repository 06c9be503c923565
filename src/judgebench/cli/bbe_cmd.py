"""CLI for `judgebench bbe`: average bias-bounded evaluation (PROTOCOL §5) of a run, a table or Arena-Hard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.table import Table

from judgebench.cli.app import BaseUrlOpt, MaxRetriesOpt, TimeoutOpt, app, console, err_console, handle_errors
from judgebench.errors import ConfigError, JudgebenchError

if TYPE_CHECKING:
    from judgebench.bbe.api import PerturbRequest
    from judgebench.bbe.engine import JitterSpec
    from judgebench.bbe.mechanism import Centre
    from judgebench.bbe.schematic import Strategy
    from judgebench.bbe.scores import InvalidPolicy, UnitScoreMode
    from judgebench.records.bbe import VerifyBlock


class InfeasibleError(JudgebenchError):
    """bbe.json was written, but some calibration cannot meet (tau, delta)."""

    exit_code = 3


def _fractions(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    if text.strip().lower() in ("halves", "half"):
        return (0.5, 0.5)
    try:
        parts = tuple(float(x) for x in text.replace("/", ",").split(","))
    except ValueError:
        raise ConfigError(f"--delta-split '{text}': give fractions such as 0.45,0.45,0.1") from None
    if len(parts) not in (2, 3):
        raise ConfigError("--delta-split takes two (sensitivity,noise) or three (+estimate) fractions")
    return parts


def _alpha(text: str) -> float | None:
    if text.strip().lower() == "auto":
        return None
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--alpha '{text}': a number in (0, 1] or 'auto'") from None


def _centre(text: str) -> Centre:
    if text == "mean":
        return "mean"
    if text == "median":
        return "median"
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--centre '{text}': mean, median or a value on the score scale") from None


def _jitter(text: str) -> JitterSpec:
    if text == "none":
        return "none"
    if text == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--jitter '{text}': none, auto or a value in the score's units") from None


def _fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


@app.command("bbe")
@handle_errors
def bbe_command(
    tau: Annotated[float, typer.Option("--tau", help="Largest tolerated L2 move of the normalised scores.")],
    delta: Annotated[float, typer.Option("--delta", help="Allowed probability of a larger move.")],
    run: Annotated[Path | None, typer.Option("--run", help="Judge-LS run folder (judgments.jsonl).")] = None,
    scores: Annotated[
        Path | None,
        typer.Option("--scores", help="Table: system, unit, context (base|neighbour), score [+factors]."),
    ] = None,
    scale: Annotated[
        tuple[float, float] | None, typer.Option("--scale", help="Declared score range MIN MAX of --scores.")
    ] = None,
    factor_scale: Annotated[
        tuple[float, float] | None,
        typer.Option("--factor-scale", help="Range MIN MAX of the factor columns (default: --scale)."),
    ] = None,
    arena_hard: Annotated[
        Path | None,
        typer.Option("--arena-hard", help="arena-hard-auto judgment folder (<model>.jsonl files)."),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="Arena-Hard: the baseline model, left out of the systems."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every draw (noise, holdout, verify).")] = 0,
    verify: Annotated[
        int | None,
        typer.Option(
            "--verify", help="K fresh (neighbour, noise) draws: violation rate vs delta (+ holdout check)."
        ),
    ] = None,
    alpha: Annotated[
        str,
        typer.Option(
            "--alpha", help="Shrinkage in (0, 1]: 1 = none (default), or 'auto' (largest with --margin)."
        ),
    ] = "1",
    margin: Annotated[
        float, typer.Option("--margin", help="alpha auto: share of tau kept for the noise (0 < M < 1).")
    ] = 0.5,
    delta_split: Annotated[
        str | None,
        typer.Option(
            "--delta-split",
            help="Fractions of delta: sensitivity,noise[,estimate]; halves (0.45,0.45,0.1 with a bound).",
        ),
    ] = None,
    centre: Annotated[
        str, typer.Option("--centre", help="Shrinkage centre: mean, median or a value on the score scale.")
    ] = "mean",
    jitter: Annotated[
        str,
        typer.Option(
            "--jitter",
            help="Jitter to remove: none, auto (from repeated base rows) or an RMS in score units.",
        ),
    ] = "none",
    dim: Annotated[
        int | None,
        typer.Option("--dim", help="Noise dimension d (default: 2 x items for a run, else the units)."),
    ] = None,
    clip: Annotated[bool, typer.Option("--clip/--no-clip", help="Clip released scores to the scale.")] = True,
    upper_bound: Annotated[
        bool,
        typer.Option(
            "--upper-bound/--plugin",
            help="Delta: an upper confidence bound (spends delta_estimate) or the plug-in RMS (default).",
        ),
    ] = False,
    neighbours: Annotated[
        str | None,
        typer.Option("--neighbours", help="Neighbour kinds to bound, comma-separated (e.g. zh,ls,swap)."),
    ] = None,
    invalid_neighbours: Annotated[
        str,
        typer.Option("--invalid-neighbours", help="skip (counted and reported) or worst (largest change)."),
    ] = "skip",
    unit_score: Annotated[
        str,
        typer.Option("--unit-score", help="Judge-LS unit score: auto, verdict or prob (log-probabilities)."),
    ] = "auto",
    strategy: Annotated[
        str, typer.Option("--strategy", help="Schematic combination: formatting, max, rms or mean.")
    ] = "max",
    judge: Annotated[
        str | None, typer.Option("--judge", help="Name of the judge of a --scores table.")
    ] = None,
    perturb: Annotated[
        str | None,
        typer.Option("--perturb", help="Re-judge perturbed units: formatting or criteria (needs --model)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="The run's judge to re-judge with --perturb.")
    ] = None,
    perturb_units: Annotated[
        int,
        typer.Option("--perturb-units", help="How many en units to perturb (sampled by --seed; 0 = all)."),
    ] = 200,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="Dataset SPEC for --perturb (default: the run's).")
    ] = None,
    data_dir: Annotated[
        str | None, typer.Option("--data-dir", help="Local LLMBar copy for --perturb.")
    ] = None,
    template: Annotated[str | None, typer.Option("--template", help="Judge template for --perturb.")] = None,
    base_url: BaseUrlOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Bypass the response cache for --perturb.")
    ] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Where to write bbe.json.")] = None,
    plot: Annotated[bool, typer.Option("--plot/--no-plot", help="Write the plot beside bbe.json.")] = True,
) -> None:
    """Average bias-bounded evaluation: calibrated noise and shrinkage so that a bias of the given kind
    moves the scores by more than --tau with probability at most --delta; rankings before and after."""
    from judgebench.bbe.api import (
        bbe_from_arena_hard,
        bbe_from_run,
        bbe_from_table,
        default_out,
        write_outputs,
    )
    from judgebench.bbe.engine import BBEParams

    if run is not None:
        from judgebench.rundir import safe_run_path

        run = safe_run_path(run)
    sources = [x is not None for x in (run, scores, arena_hard)]
    if sum(sources) != 1:
        raise ConfigError("give exactly one of --run DIR, --scores FILE --scale MIN MAX, --arena-hard DIR")
    if scores is not None and scale is None:
        raise ConfigError("--scores needs --scale MIN MAX (the declared range, never the observed one)")
    if invalid_neighbours not in ("skip", "worst"):
        raise ConfigError("--invalid-neighbours: skip or worst")
    if unit_score not in ("auto", "verdict", "prob"):
        raise ConfigError("--unit-score: auto, verdict or prob")
    if strategy not in ("formatting", "max", "rms", "mean"):
        raise ConfigError("--strategy: formatting, max, rms or mean")
    if (perturb is None) != (model is None):
        raise ConfigError("--perturb KIND and --model M go together")
    if perturb is not None and run is None:
        raise ConfigError("--perturb re-judges units of a Judge-LS run: give --run DIR")
    if out is not None and out.is_dir():  # checked before any work: nothing is written then refused
        raise ConfigError(f"--out {out} is a folder; give the path of the bbe.json to write")
    params = BBEParams(
        tau=tau,
        delta=delta,
        split=_fractions(delta_split),
        alpha=_alpha(alpha),
        margin=margin,
        centre=_centre(centre),
        jitter=_jitter(jitter),
        dim=dim,
        clip=clip,
        upper_bound=upper_bound,
        seed=seed,
        verify=verify,
        invalid=cast("InvalidPolicy", invalid_neighbours),
        strategy=cast("Strategy", strategy),
    )
    kinds = [k.strip() for k in neighbours.split(",") if k.strip()] if neighbours else None
    if run is not None:
        request = None
        if perturb is not None and model is not None:
            request = _perturb_request(
                run,
                perturb,
                model,
                perturb_units,
                dataset,
                data_dir,
                template,
                base_url,
                timeout,
                max_retries,
                no_cache,
            )
        mode = cast("UnitScoreMode", unit_score)
        result = bbe_from_run(run, params, unit_score_mode=mode, neighbours=kinds, perturb=request)
    elif scores is not None and scale is not None:
        fscale = (float(factor_scale[0]), float(factor_scale[1])) if factor_scale else None
        result = bbe_from_table(
            scores,
            (float(scale[0]), float(scale[1])),
            params,
            judge=judge,
            neighbours=kinds,
            factor_scale=fscale,
        )
    else:
        assert arena_hard is not None
        result = bbe_from_arena_hard(arena_hard, params, baseline=baseline)
    target = out or default_out(run=run, scores=scores, arena=arena_hard)
    outputs = write_outputs(result, target, plot=plot)
    _print(result)
    console.print(f"bbe.json: {outputs['bbe_json']}")
    console.print(f"per-unit scores: {outputs['scores_csv']}")
    if "plot" in outputs:
        console.print(f"plot: {outputs['plot']}")
    bad = [c for c in result.result.calibrations + result.result.factor_calibrations if not c.feasible]
    if bad:
        raise InfeasibleError(
            "; ".join(f"{c.judge}: {c.reason}" for c in bad) + f" (bbe.json written to {target})"
        )


def _perturb_request(
    run: Path,
    kind: str,
    model: str,
    units: int,
    dataset: str | None,
    data_dir: str | None,
    template: str | None,
    base_url: str | None,
    timeout: float | None,
    max_retries: int | None,
    no_cache: bool,
) -> PerturbRequest:
    from judgebench.api import CallOptions, open_dataset
    from judgebench.bbe.api import PerturbRequest
    from judgebench.bbe.neighbours import PERTURB_KINDS
    from judgebench.rundir import RunDir

    if kind not in PERTURB_KINDS:
        raise ConfigError(
            f"--perturb {kind}: choose {', '.join(PERTURB_KINDS)} (zh/ls/swap are in the run already)"
        )
    run_dir = RunDir(run)
    ds = open_dataset(run_dir, dataset, data_dir)
    if template is None:
        recorded = ((run_dir.load_manifest().get("stages") or {}).get("judge") or {}).get("template") or {}
        path = recorded.get("path")
        template = path if path and path != "default" else None
    return PerturbRequest(
        kind=kind,
        model=model,
        units=units or None,
        items=ds.by_id(),
        options=CallOptions(
            base_url=base_url, timeout=timeout, max_retries=max_retries, use_cache=not no_cache
        ),
        template=template,
    )


def _verify_text(v: VerifyBlock) -> str:
    text = f"{v.rate:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}]"
    h = v.holdout
    if h is not None and h.rate is not None and h.ci_low is not None and h.ci_high is not None:
        text += f"; holdout {h.rate:.3f} [{h.ci_low:.3f}, {h.ci_high:.3f}]"
    elif h is not None:
        text += "; holdout: infeasible from half the units"
    return text


def _print(result: object) -> None:
    from judgebench.bbe.engine import BBERun

    assert isinstance(result, BBERun)
    res = result.result
    table = Table(
        title=f"A-BB (tau {res.tau}, delta {res.delta} = {res.delta_sensitivity:.3g} sensitivity + "
        f"{res.delta_noise:.3g} noise + {res.delta_estimate:.3g} estimate; normalised units)"
    )
    for col in ("judge", "d", "Δ plug-in/used", "α", "σ", "ok", "r unit P/S", "invalid", "verify [95% CI]"):
        table.add_column(col, overflow="fold")
    for c in res.calibrations + res.factor_calibrations:
        v = c.verify
        table.add_row(
            c.judge,
            str(c.d),
            f"{_fmt(c.sensitivity_plugin, 3)}/{_fmt(c.sensitivity, 3)}",
            _fmt(c.alpha, 3),
            _fmt(c.sigma, 3),
            "yes" if c.feasible else "[red]no[/]",
            f"{_fmt(c.correlation.pearson, 2)}/{_fmt(c.correlation.spearman, 2)}",
            str(sum(c.invalid_neighbours.values())),
            "-" if v is None else _verify_text(v),
        )
    console.print(table)
    if res.systems:
        st = Table(title="systems: aggregate and rank, raw -> bias-bounded")
        for col in ("system", "units", "raw", "bias-bounded", "rank raw", "rank bias-bounded"):
            st.add_column(col, overflow="fold")
        for row in res.systems[:50]:
            st.add_row(
                row.system,
                str(row.units),
                _fmt(row.raw),
                _fmt(row.bias_bounded),
                str(row.rank_raw),
                "-" if row.rank_bias_bounded is None else str(row.rank_bias_bounded),
            )
        console.print(st)
    rc = res.rank_correlation
    if rc is not None:
        console.print(
            f"rank correlation raw vs bias-bounded: Spearman {_fmt(rc.spearman, 3)}, "
            f"Kendall {_fmt(rc.kendall, 3)}"
        )
    for name, why in res.judges_skipped.items():
        err_console.print(f"note: judge {name} not calibrated: {why}", highlight=False)
    for name, why in res.factors_skipped.items():
        err_console.print(f"note: factor {name} not bias-bounded: {why}")
    for c in res.calibrations:
        if c.invalid_neighbours:
            counts = ", ".join(f"{k} {n}" for k, n in sorted(c.invalid_neighbours.items()))
            err_console.print(
                f"note: {c.judge}: invalid or missing neighbour judgments ({counts}) "
                f"{'skipped' if c.invalid_neighbour_policy == 'skip' else 'scored as the largest change'}"
            )
