"""CLI for `judgebench bbe`: average bias-bounded evaluation (PROTOCOL §5) of a run, a table or Arena-Hard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from judgebench.cli import render
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, handle_errors
from judgebench.cli.exits import ExitCode
from judgebench.config import defaults
from judgebench.errors import ConfigError

if TYPE_CHECKING:
    from judgebench.api import Centre, JitterSpec


def _certificate_help() -> str:
    """`--certificate`'s help from the certificate registry. Typer evaluates this module's annotations
    each time it builds the command, so a certificate registered anywhere (a plugin, a test's toy) is
    listed with no edit here; the registry loads without numpy."""
    from judgebench.bbe import certificate_registry as registry

    kinds = [registry.kind_of(name) for name in registry.names()]
    listed = ", ".join(f"{k.name} ({k.summary})" if k.summary else k.name for k in kinds)
    return f"Bias bound, one of: auto (the tightest that carries over to new items), {listed}."


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
    if text == "auto":
        return "auto"
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


# BBEParams fields named differently from their flags (for error messages)
_FLAGS = {"split": "--delta-split", "invalid": "--invalid-neighbours", "upper_bound": "--upper-bound"}
_FLAGS.update(
    {
        name: f"--{name}"
        for name in (
            "tau",
            "delta",
            "alpha",
            "margin",
            "centre",
            "jitter",
            "dim",
            "verify",
            "certificate",
            "sensitivity",
        )
    }
)
_FLAGS["verify_kind"] = "--verify-kind"


@app.command("bbe")
@handle_errors
def bbe_command(
    tau: opt.TauOpt,
    delta: opt.DeltaOpt,
    run: opt.BBERunOpt = None,
    scores: Annotated[
        Path | None,
        typer.Option(
            "--scores",
            metavar="FILE",
            help="Table: system, unit, context (base|neighbour), score [+factors].",
        ),
    ] = None,
    scale: Annotated[
        tuple[float, float] | None,
        typer.Option("--scale", metavar="MIN MAX", help="Declared score range MIN MAX of --scores."),
    ] = None,
    factor_scale: Annotated[
        tuple[float, float] | None,
        typer.Option(
            "--factor-scale",
            metavar="MIN MAX",
            help="Range MIN MAX of the factor columns (default: --scale).",
        ),
    ] = None,
    arena_hard: Annotated[
        Path | None,
        typer.Option(
            "--arena-hard", metavar="DIR", help="arena-hard-auto judgment folder (<model>.jsonl files)."
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline", metavar="MODEL", help="Arena-Hard: the baseline model, left out of the systems."
        ),
    ] = None,
    seed: opt.BBESeedOpt = 0,
    verify: Annotated[
        int | None,
        typer.Option(
            "--verify",
            help="K draws of a neighbour and fresh noise at the released sigma (the redraw), and with 40+ "
            "items the holdout (the rule recalibrated on half the items, checked on the rest); either "
            "failing fails, and bbe.json states that rule's power.",
        ),
    ] = None,
    verify_kind: Annotated[
        str,
        typer.Option(
            "--verify-kind",
            metavar="KIND",
            help="One of: holdout (the redraw, plus the rule recalibrated on half the items or "
            "questions and checked on the rest), fresh (judge new neighbours).",
        ),
    ] = "holdout",
    certificate: Annotated[
        str,
        typer.Option(
            "--certificate",
            metavar="NAME",
            help=_certificate_help(),
        ),
    ] = "auto",
    sensitivity: Annotated[
        float | None,
        typer.Option("--sensitivity", help="Use this normalised sensitivity instead of the measured one."),
    ] = None,
    calibrate_from: Annotated[
        Path | None,
        typer.Option(
            "--calibrate-from",
            metavar="DIR",
            help="Judge-LS run whose --judge neighbours calibrate the release of the --scores table.",
        ),
    ] = None,
    alpha: Annotated[
        str,
        typer.Option(
            "--alpha",
            metavar="X|auto",
            help="Shrinkage: auto (default, as `run`: the largest alpha leaving --margin of the "
            "certificate's feasible range) or a value in (0, 1] (1 = none).",
        ),
    ] = "auto",
    margin: Annotated[
        float, typer.Option("--margin", help="alpha auto: share of tau kept for the noise (0 < M < 1).")
    ] = 0.5,
    delta_split: Annotated[
        str | None,
        typer.Option(
            "--delta-split",
            metavar="X,X[,X]",
            help="Fractions of delta for the sensitivity, the noise and (with --upper-bound) the estimate, "
            "e.g. 0.45,0.45,0.1; default: halves, or 0.45,0.45,0.1 with a bound.",
        ),
    ] = None,
    centre: Annotated[
        str,
        typer.Option(
            "--centre",
            metavar="CENTRE",
            help="Shrinkage centre: auto (0.5 for a run's judges, else mean), mean, median or a value.",
        ),
    ] = "auto",
    jitter: Annotated[
        str,
        typer.Option(
            "--jitter",
            metavar="JITTER",
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
        typer.Option(
            "--neighbours",
            metavar="LIST",
            help="Neighbour kinds to bound, comma-separated (e.g. zh,ls,swap).",
        ),
    ] = None,
    probes: Annotated[
        str | None,
        opt.probes_option(
            "Probes to calibrate on besides the languages and the order swap: their conditions in "
            "the run (length, zh+length, template-1, ...) become neighbours"
        ),
    ] = None,
    invalid_neighbours: Annotated[
        str,
        typer.Option(
            "--invalid-neighbours",
            metavar="POLICY",
            help="One of: skip (counted and reported), worst (largest change).",
        ),
    ] = "skip",
    unit_score: Annotated[
        str,
        typer.Option(
            "--unit-score",
            metavar="SCORE",
            help="Judge-LS unit score, one of: auto, verdict, prob (log-probabilities).",
        ),
    ] = "auto",
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy", metavar="RULE", help="Schematic combination, one of: formatting, max, rms, mean."
        ),
    ] = "max",
    judge: opt.ScoresJudgeOpt = None,
    perturb: Annotated[
        str | None,
        typer.Option(
            "--perturb",
            metavar="KIND",
            help="Re-judge perturbed units, one of: formatting, criteria (needs --model).",
        ),
    ] = None,
    model: opt.PerturbModelOpt = None,
    perturb_units: Annotated[
        int,
        typer.Option(
            "--perturb-units",
            help="How many en units to perturb, for --perturb and --verify-kind fresh (by --seed; 0 = all).",
        ),
    ] = defaults.PERTURB_UNITS,
    dataset: opt.PerturbDatasetOpt = None,
    data_dir: opt.PerturbDataDirOpt = None,
    template: opt.PerturbTemplateOpt = None,
    base_url: opt.BaseUrlOpt = None,
    timeout: opt.TimeoutOpt = None,
    wait_lock: opt.WaitLockOpt = False,
    max_answer_chars: opt.MaxAnswerCharsOpt = None,
    max_retries: opt.MaxRetriesOpt = None,
    concurrency: opt.ConcurrencyOpt = None,
    rpm: opt.RpmOpt = None,
    no_cache: opt.NoCacheOpt = False,
    batch: opt.BatchOpt = False,
    poll_interval: opt.PollIntervalOpt = defaults.POLL_INTERVAL_S,
    repeats: opt.BBERepeatsOpt = None,
    dry_run: opt.BBEDryRunOpt = False,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="PATH", help="Where to write bbe.json.")
    ] = None,
    plot: Annotated[bool, typer.Option("--plot/--no-plot", help="Write the plot beside bbe.json.")] = True,
) -> None:
    """Average bias-bounded evaluation: calibrated noise and shrinkage so that a bias of the given kind
    moves the scores by more than --tau with probability at most --delta; rankings before and after."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    if (perturb is None) != (model is None):
        raise ConfigError("--perturb KIND and --model M go together")
    fields: dict[str, Any] = {
        "tau": tau,
        "delta": delta,
        "split": _fractions(delta_split),
        "alpha": _alpha(alpha),
        "margin": margin,
        "centre": _centre(centre),
        "jitter": _jitter(jitter),
        "dim": dim,
        "clip": clip,
        "upper_bound": upper_bound,
        "seed": seed,
        "verify": verify,
        "verify_kind": verify_kind,
        "certificate": certificate,
        "sensitivity": sensitivity,
        "invalid": invalid_neighbours,
        "strategy": strategy,
    }
    perturbation = None
    if perturb is not None:
        perturbation = {
            "kind": perturb,
            "model": model,
            "units": perturb_units or None,
            "dataset": dataset,
            "data_dir": data_dir,
            "template_path": template,
        }
    params = api.build_request(api.BBEParams, None, fields, flags=_FLAGS)
    given: dict[str, Any] = {
        "params": params,
        "run": run,
        "scores": scores,
        "scale": scale,
        "factor_scale": factor_scale,
        "arena_hard": arena_hard,
        "baseline": baseline,
        "judge": judge,
        "calibrate_from": calibrate_from,
        "neighbours": [k.strip() for k in neighbours.split(",") if k.strip()] if neighbours else None,
        "probes": [k.strip() for k in probes.split(",") if k.strip()] if probes else None,
        "unit_score": unit_score,
        "perturb": perturbation,
        "fresh_units": perturb_units or None,
        "repeats": repeats,
        "out": out,
        "plot": plot,
    }
    request = api.build_request(api.BBERequest, None, given, flags=_FLAGS)
    options = opt.call_options_from(locals())
    if dry_run:
        rows = api.bbe_estimate(request, options=options)
        if rows:
            render.estimates(rows)
        else:
            render.note("dry run: this bbe makes no calls (only --perturb, --verify-kind fresh, --repeats)")
        return
    outcome = api.bbe(
        request, options=options, execution=opt.execution(batch=batch, poll_interval=poll_interval)
    )
    render.bbe(outcome)
    if outcome.infeasible:
        kept = (
            f"; the last feasible release stays in {outcome.kept} (--out it to replace)"
            if outcome.kept
            else ""
        )
        render.note(f"error: {'; '.join(outcome.infeasible)} (bbe.json written to {outcome.out}{kept})")
        raise typer.Exit(code=ExitCode.INCOMPLETE)
