"""Everything the CLI prints: typed library results rendered as rich tables and lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from judgebench.cli.app import console, err_console
from judgebench.progress import about, clock

if TYPE_CHECKING:
    from judgebench.api import (
        BBEOutcome,
        Dataset,
        DatasetList,
        Estimate,
        JudgeResult,
        SelftestResult,
        TranslateResult,
    )
    from judgebench.records.bbe_document import BBEResult, Calibration, VerifyBlock


def note(message: str) -> None:
    """One line of outside text (a server's error, an item id) on stderr, never read as markup."""
    err_console.print(message, highlight=False, soft_wrap=True, markup=False)


def _add(table: Table, *cells: str | Text, style: str | None = None) -> None:
    """A table row whose text cells are shown as they are: a subset or judge name, an item id or a
    server's text holding `[/x]` is not rich markup (that crashed the CLI)."""
    table.add_row(*[Text(c) if isinstance(c, str) else c for c in cells], style=style)


def usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.4f}"


def estimates(rows: Sequence[Estimate], title: str = "dry run: nothing was called") -> None:
    table = Table(title=title)
    columns = (
        "stage",
        "model",
        "calls",
        "done",
        "input tok",
        "output tok",
        "tokens by",
        "live",
        "batch",
        "time",
    )
    for col in columns:
        table.add_column(col, justify="right" if col not in {"stage", "model", "tokens by"} else "left")
    for e in rows:
        _add(
            table,
            e.stage,
            e.model,
            f"{e.calls:,}",
            f"{e.already_done:,}",
            f"{e.input_tokens:,}",
            f"{e.output_tokens:,}",
            e.token_method,
            usd(e.cost_live_usd),
            usd(e.cost_batch_usd),
            "-" if e.seconds is None else clock(e.seconds),
        )
    console.print(table)
    for e in rows:
        if e.detail is not None and e.calls:
            note(f"{e.stage} {e.model}: {e.calls:,} calls for {e.detail}")
        if e.output_source is not None and e.calls:
            per = e.output_tokens / e.calls
            note(f"{e.stage} {e.model}: output tokens per reply {per:.1f}, {e.output_source}")
    _time(rows)


def _time(rows: Sequence[Estimate]) -> None:
    """The expected wall time: stages one after another, the judges of a stage side by side."""
    timed = [e for e in rows if e.seconds]  # calls to make, or a stage with none that takes time
    if not timed:
        return
    stages: dict[str, float] = {}
    for e in timed:
        stages[e.stage] = max(stages.get(e.stage, 0.0), e.seconds or 0.0)
    each = ", ".join(f"{stage} {clock(seconds)}" for stage, seconds in stages.items())
    note(
        f"expected time: {about(sum(stages.values()))} ({each}): calls x seconds a call, over "
        "--concurrency and --rpm for an API, one at a time for the embedded model (slower on a busy "
        "machine); the first calls' pace corrects it on the progress line"
    )
    for e in timed:
        note(f"  {e.stage} {e.model}: {e.seconds_source}")


# --- translate -------------------------------------------------------------------------------------


def _cost(usd: float, unpriced: int) -> str:
    """A stage's cost, written as the dry run writes it: `unpriced` when no call had a price."""
    if unpriced == 0:
        return f"${usd:.4f}"
    if usd == 0:
        return f"{unpriced} unpriced call(s)"
    return f"${usd:.4f} + {unpriced} unpriced call(s)"


def import_dry_run(result: TranslateResult, variants: str | None) -> None:
    """`translate --dry-run` with nothing to translate: what an import would add; nothing written."""
    where = result.imported_from or variants or "nowhere"
    console.print(
        f"dry run: {result.imported} variant(s) would be imported from {where}; nothing written", markup=False
    )


def translation(result: TranslateResult, run: str, variants: str | None) -> None:
    if result.outcome is not None:
        o = result.outcome
        console.print(
            f"translated {o.translated} item(s), {o.already_done} already done, {len(o.failed)} failed; "
            f"{o.provider_calls} provider call(s) (one per item for every condition at once, long items in "
            f"pieces, re-asks extra), {o.cache_hits} from cache, "
            f"{o.input_tokens + o.output_tokens:,} tokens, {_cost(o.cost_usd, o.unpriced_calls)}"
        )
        if o.failed:
            err_console.print(
                f"[red]{len(o.failed)} item(s) could not be translated[/] (kept in "
                f"{run}/translation_failures.jsonl; rerun the command to retry only them)",
                highlight=False,
            )
            for failure in o.failed[:20]:
                note(f"  {failure.item_id}: {failure.reason}")
            if len(o.failed) > 20:
                note(f"  ... and {len(o.failed) - 20} more")
    if result.outcome is None or result.imported_from:
        console.print(
            f"imported {result.imported} variant(s) from {result.imported_from or variants}", markup=False
        )
        if result.skipped_variants:
            note(
                f"note: {result.skipped_variants} line(s) of {variants} left out: their item or condition "
                "is not selected (--limit, --subset, --conditions)"
            )
    table = Table(title=f"audit: {result.flags} flag(s)")
    table.add_column("rule")
    table.add_column("condition")
    table.add_column("flags", justify="right")
    per_condition = result.audit_summary.get("by_condition_rule") or {}
    if isinstance(per_condition, dict):
        for cond, rules in sorted(per_condition.items()):
            for rule, count in sorted(rules.items()):
                _add(table, rule, cond, str(count))
    console.print(table)
    flagged = result.audit_summary.get("flagged_items")
    if flagged is not None:
        share = result.audit_summary.get("flagged_share")
        pct = f" ({share:.1%})" if isinstance(share, float) else ""
        console.print(f"flagged items (excluded from the filtered tables): {flagged}{pct}", markup=False)
    console.print(f"wrote {run}/variants.jsonl and {run}/audit.jsonl", markup=False)


# --- judge -----------------------------------------------------------------------------------------


def judging(result: JudgeResult, run: str) -> bool:
    """The per-judge table and the failed calls; True when some call failed."""
    table = Table(title=f"judge: {result.planned} planned call(s)")
    columns = ("judge", "planned", "done before", "verdicts", "invalid", "missing", "provider calls")
    for col in (*columns, "cached", "tokens", "cost"):
        table.add_column(col, justify="left" if col == "judge" else "right")
    failed = False
    for name, o in result.outcomes.items():
        _add(
            table,
            name,
            str(o.planned),
            str(o.already_done),
            str(o.verdicts),
            str(o.invalid),
            str(o.missing),
            str(o.provider_calls),
            str(o.cache_hits),
            f"{o.input_tokens + o.output_tokens:,}",
            _cost(o.cost_usd, o.unpriced_calls),
        )
        if o.failures:
            failed = True
            sent = len(o.failures) - o.unsent
            not_sent = f"; {o.unsent} not sent (the key was rejected, see below)" if o.unsent else ""
            err_console.print(
                f"[red]{escape(name)}: {sent} call(s) failed{not_sent}[/] "
                "(rerun the command to retry only them)"
            )
            for f in o.failures[:10]:
                note(f"  {f.key}: {f.error}")
            if len(o.failures) > 10:
                note(f"  ... and {len(o.failures) - 10} more")
        if o.stopped:
            err_console.print(f"[red]{escape(name)}: stopped[/]: {escape(o.stopped)}")
    console.print(table)
    for name, stop in result.stops.items():  # judge --until-settled
        verdicts = ", ".join(f"{c} {v}" for c, v in stop.verdicts.items())
        share = stop.calls / max(1, stop.calls_full)
        console.print(
            f"{escape(name)}: {stop.reason} after {stop.items} of {stop.items_total} items "
            f"({stop.calls} of {stop.calls_full} calls, {share:.0%}): {escape(verdicts)}"
        )
        failed = failed or not stop.final
    if result.repeats:
        console.print(
            f"re-asked {result.repeats:,} call(s) for the repeat jitter -> {run}/bbe_neighbours.jsonl",
            markup=False,
        )
    console.print(f"wrote {run}/judgments.jsonl", markup=False)
    return failed


# --- bbe -------------------------------------------------------------------------------------------


def _fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def _verify_text(v: VerifyBlock) -> str:
    """The verdict, then each part that ran (a holdout that did not run is named as such)."""
    verdict = "" if v.passed is None else ("pass: " if v.passed else "FAIL: ")  # cells are plain text
    text = f"{verdict}{v.label} {v.rate:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}]"
    h = v.holdout
    if h is not None and h.rate is not None and h.ci_low is not None and h.ci_high is not None:
        text += f"; holdout {h.rate:.3f} [{h.ci_low:.3f}, {h.ci_high:.3f}]"
    elif h is not None:
        text += f"; no holdout ({h.reason or 'infeasible from half the units'})"
    power = [f"{v.power[k]:.2f} at {k.removesuffix('x')}δ" for k in ("1.5x", "2x") if k in v.power]
    either = " (either part failing)" if len(v.power_parts) > 1 else ""
    return text + (f"; P(fail){either} {', '.join(power)}" if power else "")


def _calibrations(res: BBEResult) -> None:
    table = Table(
        title=f"A-BB (tau {res.tau}, delta {res.delta} = {res.delta_sensitivity:.3g} sensitivity + "
        f"{res.delta_noise:.3g} noise + {res.delta_estimate:.3g} estimate; normalised units)"
    )
    cols = ("judge", "d", "Δ plug-in/used", "certificate", "α (needed)", "σ", "ok", "r unit P/S", "invalid")
    for col in (*cols, "verify [95% CI]"):
        table.add_column(col, overflow="fold")
    for c in res.calibrations + res.factor_calibrations:
        fixed = " (fixed)" if c.sensitivity_source == "fixed" else ""
        if c.jitter_measured is not None:
            fixed += f"; jitter {_fmt(c.jitter_measured, 3)}"
        _add(
            table,
            c.judge,
            str(c.d),
            f"{_fmt(c.sensitivity_plugin, 3)}/{_fmt(c.sensitivity, 3)}{fixed}",
            _certificate_text(c),
            f"{_fmt(c.alpha, 3)} ({_fmt(c.alpha_needed, 3)})",
            _fmt(c.sigma, 3),
            "yes" if c.feasible else Text("no", style="red"),
            f"{_fmt(c.correlation.pearson, 2)}/{_fmt(c.correlation.spearman, 2)}",
            str(sum(c.invalid_neighbours.values())),
            "-" if c.verify is None else _verify_text(c.verify),
        )
    console.print(table)


def _certificate_text(c: Calibration) -> str:
    """The certificate used, then every applicable one's alpha_max."""
    others = ", ".join(f"{r.name} {_fmt(r.alpha_max, 3)}" for r in c.certificates)
    name = f"{c.certificate or '-'}{' in-sample' if c.in_sample else ''}"
    return f"{name} (α_max: {others})" if others else name


def _utility(res: BBEResult) -> None:
    u = res.utility
    if u is None or u.pairs == 0:
        return
    kept = "-" if u.pairs_kept_95 is None else f"{u.pairs_kept_95:.0%}"
    order = {True: "kept", False: "[red]changed[/]", None: "-"}[u.noise_free_order_kept]
    console.print(
        f"utility: {u.pairs} system pairs, {kept} keep their order with probability >= 0.95; resolution "
        f"(a gap kept at >= 0.95) {_fmt(u.resolution, 3)}; raw vs released aggregates Pearson "
        f"{_fmt(u.pearson_systems, 3)}, Spearman {_fmt(u.spearman_systems, 3)}; variance reduction "
        f"{_fmt(u.variance_reduction, 3)}; noise-free order {order}"
    )


def _systems(res: BBEResult) -> None:
    if not res.systems:
        return
    table = Table(title="systems: aggregate and rank, raw -> bias-bounded")
    for col in ("system", "units", "raw", "bias-bounded", "rank raw", "rank bias-bounded"):
        table.add_column(col, overflow="fold")
    for row in res.systems[:50]:
        _add(
            table,
            row.system,
            str(row.units),
            _fmt(row.raw),
            _fmt(row.bias_bounded),
            str(row.rank_raw),
            "-" if row.rank_bias_bounded is None else str(row.rank_bias_bounded),
        )
    console.print(table)


def _failed_part(v: VerifyBlock) -> str:
    """Which part failed, with its rate and Wilson lower bound against delta."""
    h = v.holdout
    parts = []
    if v.ci_low > v.delta:
        parts.append(f"{v.label}: violation rate {v.rate:.3f}, Wilson lower bound {v.ci_low:.3f}")
    if h is not None and h.at_or_below_delta is False and h.rate is not None and h.ci_low is not None:
        parts.append(f"holdout: violation rate {h.rate:.3f}, t-interval lower end {h.ci_low:.3f}")
    return "; ".join(parts) + f" > delta {v.delta:g}"


def _bbe_notes(res: BBEResult) -> None:
    for c in res.calibrations + res.factor_calibrations:
        v = c.verify
        if v is not None and v.passed is False:
            note(
                f"warning: {c.judge}: verification FAILED ({_failed_part(v)}); the guarantee does not "
                "hold as stated"
            )
        elif v is not None and v.note:
            note(f"note: {c.judge}: {v.note}")
    for name, why in res.judges_skipped.items():
        note(f"note: judge {name} not calibrated: {why}")
    for name, why in res.factors_skipped.items():
        note(f"note: factor {name} not bias-bounded: {why}")
    for c in res.calibrations:
        if c.invalid_neighbours:
            counts = ", ".join(f"{k} {n}" for k, n in sorted(c.invalid_neighbours.items()))
            policy = "skipped" if c.invalid_neighbour_policy == "skip" else "scored as the largest change"
            note(f"note: {c.judge}: invalid or missing neighbour judgments ({counts}) {policy}")


def bbe(outcome: BBEOutcome) -> None:
    res = outcome.result
    _calibrations(res)
    _systems(res)
    rc = res.rank_correlation
    if rc is not None:
        console.print(
            f"rank correlation raw vs bias-bounded: Spearman {_fmt(rc.spearman, 3)}, "
            f"Kendall {_fmt(rc.kendall, 3)}"
        )
    _utility(res)
    if res.transfer_assumption:
        note(res.transfer_assumption)
    _bbe_notes(res)
    console.print(f"bbe.json: {outcome.outputs['bbe_json']}", markup=False)
    console.print(f"per-unit scores: {outcome.outputs['scores_csv']}", markup=False)
    if "plot" in outcome.outputs:
        console.print(f"plot: {outcome.outputs['plot']}", markup=False)


# --- run and selftest ------------------------------------------------------------------------------


def selftest(result: SelftestResult, seed: int) -> None:
    table = Table(title=f"selftest (seed {seed}): {'PASS' if result.passed else 'FAIL'}")
    for col in ("judge", "what is checked", "planted / wanted", "observed", "interval", "ok"):
        table.add_column(col)

    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    for c in result.checks:
        interval = "-" if c.low is None else f"[{f(c.low)}, {f(c.high)}]"
        _add(
            table,
            c.judge.removeprefix("sim:"),
            c.what,
            c.want if c.want is not None else f(c.expected),
            c.got if c.got is not None else f(c.observed),
            interval,
            Text("yes", style="green") if c.passed else Text.assemble(("no", "red"), f" {c.detail}"),
        )
    console.print(table)
    if result.run_dir is None:
        console.print("run folder: removed (pass --run DIR to keep it)")
    else:
        console.print(f"run folder: {result.run_dir}", markup=False)


# --- data ------------------------------------------------------------------------------------------


def dataset(ds: Dataset) -> None:
    by_subset: dict[str, dict[int | None, int]] = {}
    for item in ds.items:
        counts = by_subset.setdefault(item.subset, {})
        counts[item.label] = counts.get(item.label, 0) + 1
    unlabelled = any(counts.get(None) for counts in by_subset.values())
    table = Table(title=f"{escape(ds.spec)}: {len(ds)} items", title_justify="left")
    table.add_column("subset")
    for name in ("items", "label 1", "label 2", *(("unlabelled",) if unlabelled else ())):
        table.add_column(name, justify="right")

    def row(name: str, counts: dict[int | None, int], style: str | None = None) -> None:
        cells = [str(sum(counts.values())), str(counts.get(1, 0)), str(counts.get(2, 0))]
        _add(table, name, *cells, *((str(counts.get(None, 0)),) if unlabelled else ()), style=style)

    total: dict[int | None, int] = {}
    for name, counts in by_subset.items():
        row(name, counts)
        for label, n in counts.items():
            total[label] = total.get(label, 0) + n
    if len(by_subset) > 1:
        table.add_section()
        row("all", total, style="bold")
    console.print(table)
    if ds.variants:
        _dataset_languages(ds)
    console.print(f"source:   {ds.source}", highlight=False, soft_wrap=True, markup=False)
    console.print(f"checksum: sha256:{ds.checksum}", highlight=False, soft_wrap=True, markup=False)


def _dataset_languages(ds: Dataset) -> None:
    """The language variants a dataset carries (M-RewardBench): one row per condition, sorted."""
    table = Table(title=f"{escape(ds.spec)}: {len(ds.variants)} languages", title_justify="left")
    for name, justify in (
        ("condition", "left"),
        ("config", "left"),
        ("items", "right"),
        ("missing", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for cond in sorted(ds.variants):
        _add(
            table,
            cond,
            ds.language_configs.get(cond, ""),
            str(len(ds.variants[cond])),
            str(ds.missing.get(cond, 0)),
        )
    console.print(table)
    for reason, count in ds.excluded.items():
        console.print(f"excluded: {count} ({reason})", highlight=False, soft_wrap=True, markup=False)
    if ds.absent_languages:
        console.print(
            f"not in this copy: {', '.join(sorted(ds.absent_languages))}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


def dataset_list(listing: DatasetList) -> None:
    table = Table(title="datasets", title_justify="left")
    for name in ("SPEC", "what", "available"):
        table.add_column(name)
    for row in listing.datasets:
        _add(table, row.spec, row.what, row.available)
    console.print(table)
    where = "local copy" if listing.local else "download cache"
    console.print(f"LLMBar {where}: {listing.root}", highlight=False, soft_wrap=True, markup=False)
    if not listing.local and not listing.complete:
        console.print(
            "offline? pass --data-dir DIR (the folder that holds LLMBar's Dataset/)", highlight=False
        )
