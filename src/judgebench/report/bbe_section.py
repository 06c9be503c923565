"""The report's A-BB section: the run's bbe.json (judges ranked raw and bias-bounded), when there is one.

The report reads bbe.json as `judgebench bbe` (or `judgebench run`) wrote it and never recomputes it;
a bbe.json older than judgments.jsonl is shown with a warning, since its numbers predate the judgments.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from judgebench.config import defaults
from judgebench.records.bbe_document import BBEResult, Calibration
from judgebench.report.cell_text import judge_cell, pct
from judgebench.report.content import DASH, Cell, Section, Table, literal
from judgebench.store.run_folder import BBE_JSON, JUDGMENTS, RunDir

PLOT_KEY = "bbe"
PLOT_FILE = "bbe.png"


@dataclass
class BBEView:
    """What the report shows of a run's A-BB: the document, whether it is older than the judgments,
    and its plot (PNG bytes) when present."""

    result: BBEResult | None
    stale: bool = False
    plot: bytes | None = None
    problem: str | None = None  # why bbe.json could not be read


def load_bbe_view(run: RunDir) -> BBEView | None:
    """The run's bbe.json for the report; None when the run has none."""
    path = run.file(BBE_JSON)
    if not path.is_file():
        return None
    try:
        result = BBEResult.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as exc:
        return BBEView(None, problem=f"{path} could not be read ({type(exc).__name__})")
    judgments = run.file(JUDGMENTS)
    stale = judgments.is_file() and judgments.stat().st_mtime > path.stat().st_mtime
    # only the plot this bbe.json names (a --no-plot run leaves an older bbe.png behind), found beside
    # it whatever folder the run was named from when bbe wrote it
    named = result.outputs.get("plot")
    plot_path = path.with_name(Path(named).name) if named else None
    plot = plot_path.read_bytes() if plot_path is not None and plot_path.is_file() else None
    return BBEView(result, stale=stale, plot=plot)


def _num(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}g}"


PROMISE = (
    "What the guarantee promises: with probability at least 1 - delta over a neighbour (a language "
    "switch or the other order, of the kinds measured) and the noise, the released score vector moves "
    "by at most tau. What it does not promise: that the released ranking is the true one, that biases "
    "of other kinds are bounded, or (with an in-sample certificate: exact) anything about other items; "
    "which orders survive the noise is the utility above."
)


def power_text(power: dict[str, float]) -> str:
    """The verification's power beside its verdict: P(fail) at 1.5 and 2 times delta."""
    parts = [f"{power[k]:.2f} at {k.removesuffix('x')}δ" for k in ("1.5x", "2x") if k in power]
    return f"P(fail) {', '.join(parts)}" if parts else ""


def _calibration_row(c: Calibration) -> list[Cell]:
    v = c.verify
    if v is None:
        verify = DASH
    else:
        verdict = "" if v.passed is None else ("pass " if v.passed else "FAIL ")
        verify = f"{verdict}{v.label} {v.rate:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}]"
        if v.holdout is not None and v.holdout.rate is not None:
            verify += f"; holdout {v.holdout.rate:.3f}"
        if v.power:
            verify += f" ({power_text(v.power)})"
    others = ", ".join(f"{r.name} {_num(r.alpha_max)}" for r in c.certificates)
    label = " in-sample" if c.in_sample else ""
    return [
        judge_cell(c.judge),
        Cell(f"{c.d:,}"),
        Cell(_num(c.sensitivity_plugin)),
        Cell(_num(c.sensitivity) + (" (fixed)" if c.sensitivity_source == "fixed" else "")),
        Cell(f"{c.certificate or DASH}{label}" + (f" ({others})" if others else "")),
        Cell(f"{_num(c.alpha)} ({_num(c.alpha_needed)})"),
        Cell(_num(c.sigma)),
        Cell("yes" if c.feasible else "no", None if c.feasible else "fail"),
        Cell(verify, None if v is None or v.passed is not False else "fail"),
    ]


def _utility_paragraph(section: Section, res: BBEResult) -> None:
    u = res.utility
    if u is None or u.pairs == 0:
        return
    kept = DASH if u.pairs_kept_95 is None else f"{pct(u.pairs_kept_95)}%"
    order = {True: "keeps", False: "does not keep", None: "-"}[u.noise_free_order_kept]
    section.paragraphs.append(
        f"Pairs kept: {kept} of the {u.pairs} judge pairs keep their raw order with probability at "
        f"least 0.95; a raw gap of {_num(u.resolution)} or more is kept with that probability (the "
        f"release's resolution). Raw vs released aggregates: Pearson {_num(u.pearson_systems)}, "
        f"Spearman {_num(u.spearman_systems)}; variance reduction {_num(u.variance_reduction)}. With "
        f"one shared alpha and the label-neutral centre, the noise-free release {order} the raw order."
    )


def bbe_section(view: BBEView | None) -> Section:
    section = Section("bbe", "A-BB: bias-bounded rankings")  # in the terminal too: the summary a user reads
    command = f"judgebench bbe --tau {defaults.TAU:g} --delta {defaults.DELTA:g} --run RUN --alpha auto"
    if view is None:
        section.empty = f"Not computed for this run: `{command}` adds it (no new calls)."
        return section
    if view.result is None:
        section.empty = f"Not shown: {view.problem}; `{command}` writes it again."
        return section
    res = view.result
    source = res.source
    if source.get("type") != "run":  # a scores table or arena-hard folder's bbe.json saved here
        section.empty = (
            f"Not shown: the bbe.json in this folder is from {source.get('type', 'another source')} "
            f"({source.get('path', '?')}), not from this run's judgments; `{command}` computes the run's."
        )
        return section
    params = res.parameters
    alpha = params.get("alpha", "auto")
    command = f"judgebench bbe --tau {res.tau:g} --delta {res.delta:g} --run RUN --alpha {alpha}"
    mode = "an upper confidence bound" if params.get("sensitivity_mode") == "upper_bound" else "plug-in"
    probabilities = any(c.score_source == "probabilities" for c in res.calibrations)
    aggregate = (
        "its expected tie-half accuracy under its own verdict probabilities (the unit scores are "
        "log-probability based, so it differs from the report's tie-half accuracy)"
        if probabilities
        else "its tie-half accuracy over answered en judgments (invalid = wrong)"
    )
    section.paragraphs.append(
        f"tau {res.tau:g}, delta {res.delta:g} = {res.delta_sensitivity:.3g} sensitivity + "
        f"{res.delta_noise:.3g} noise + {res.delta_estimate:.3g} estimate"
        f"{f' ({res.delta_split})' if res.delta_split else ''}; sensitivity: {mode}; alpha "
        f"{params.get('alpha', DASH)}; scores normalised to [0, 1]. Each judge is a system; its aggregate "
        f"is {aggregate}."
    )
    neighbours = source.get("neighbours", "all")
    if neighbours != "all" or source.get("perturbation"):
        kinds = ", ".join(neighbours) if isinstance(neighbours, list) else str(neighbours)
        section.paragraphs.append(f"Only these neighbours were bounded: {kinds}.")
    if view.stale:
        section.paragraphs.insert(
            0,
            f"**bbe.json is older than judgments.jsonl**: these numbers predate the latest judgments; "
            f"`{command}` brings them up to date.",
        )
    rows = [
        [
            judge_cell(row.system),
            Cell(f"{row.units:,}"),
            Cell(pct(row.raw)),
            Cell(pct(row.bias_bounded)),
            Cell(str(row.rank_raw)),
            Cell(DASH if row.rank_bias_bounded is None else str(row.rank_bias_bounded)),
        ]
        for row in res.systems
    ]
    if len(rows) == 1:  # the default run: one judge, so its release is what there is to show
        section.paragraphs.append(
            "One judge in this run: A-BB releases its bias-bounded aggregate (below) and there is no "
            "ranking to compare; judge with two or more `--model` for rankings before and after."
        )
    if rows:
        section.tables.append(
            Table(
                ["Judge", "Units", "Raw aggregate %", "Bias-bounded %", "Rank raw", "Rank bias-bounded"],
                rows,
                title="Judges ranked, raw and bias-bounded",
            )
        )
    cal_rows = [_calibration_row(c) for c in res.calibrations]
    if cal_rows:
        section.tables.append(
            Table(
                [
                    "Judge",
                    "d",
                    "Δ plug-in",
                    "Δ used",
                    "Certificate",
                    "α (needed)",
                    "σ",
                    "Feasible",
                    "Verified",
                ],
                cal_rows,
                title="Calibration per judge",
                caption="Δ is the RMS change of a unit's score under a neighbour (other languages, the "
                "other order); the certificate bounds the bias term (PROTOCOL §5b; α_max of each "
                "applicable one in brackets); one marked in-sample certifies only the listed "
                "neighbours, the others carry over to new items drawn like these; α the shrinkage, "
                "shared by the compared judges (each one's own need in brackets); σ the Gaussian "
                "noise; verified (with --verify): the violation rate of ||M(D) - M(D')|| > tau at "
                "the released certificate and σ (the redraw; and, for one that carries over, the holdout: "
                "the rule recalibrated on half the items, its exact violation probability on the other "
                "half with a t-interval over those items, a test of the rule, not of the released σ), "
                "failing when either lower end exceeds delta; P(fail) is that rule's power (either part "
                "failing) if the true rate were 1.5 or 2 times delta.",
            )
        )
    _utility_paragraph(section, res)
    section.paragraphs.append(PROMISE)
    rc = res.rank_correlation
    if rc is not None:
        section.paragraphs.append(
            f"Rank correlation of the judges, raw vs bias-bounded: Spearman {_num(rc.spearman)}, "
            f"Kendall {_num(rc.kendall)}."
        )
    for c in res.calibrations:
        if c.guarantee:  # '·' for '*': the renderers read asterisks as emphasis
            section.paragraphs.append(c.guarantee.replace("*", "·"))
    for judge, why in res.judges_skipped.items():
        section.paragraphs.append(f"{literal(judge)} is not calibrated: {why}.")
    if view.plot is not None:
        section.plots.append(PLOT_KEY)
    return section
