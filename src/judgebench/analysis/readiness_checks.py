"""Pass / fail / inconclusive per judge and target condition: may this judge be used in that language?

Two parts (PROTOCOL §4). The baseline asks whether the judge works at all in en: a judge that always
answers "A", always "Tie", or flips a coin is perfectly "invariant", and must not pass. The
invariance part asks whether its verdicts survive the language switch. Where the outputs' texts are
known, the baseline also asks for accuracy above chance on both sides of the split by the gold
output's length (issue 47): a judge that picks the shorter output clears chance on LLMBar overall.
The verdict fails if either part fails and passes only if both pass on a complete run.

The papers' practical advice is to test a judge before trusting it on another language. A verdict
is only as good as its interval, so it is read from confidence bounds, never from point estimates:
fail when the evidence says the judge is worse than a threshold (a lower bound above it), pass when
it says the judge is within every threshold (each upper bound at or below it), inconclusive otherwise,
typically because too few items were judged to tell.

The bounds that decide are item-level (small_n.py): the wider of the item-clustered bootstrap (an
item's two orders are not independent, so the Wilson interval over (item, order) pairs is too narrow)
and a score interval with n = the number of items (Wilson; Tango for the paired position-inconsistency
increase), so zero flips on five items is not a pass. A check on fewer than `min_items` items (default
20) may fail but never passes: the verdict is then inconclusive and says so.
"""

from __future__ import annotations

from judgebench.analysis.findings import (
    ALL,
    MEAN_JUDGE,
    SOURCE,
    ReadinessVerdict,
    ReportSettings,
    Status,
    is_comparison,
    pair_name,
)
from judgebench.analysis.metric_registry import MetricSpec, Role, gated, read_by
from judgebench.analysis.small_n import decisive, too_few
from judgebench.records import Metric, MetricRecord

# the gated metrics whose checks are written out below (their reasons say more than a limit: the
# split by length, the degenerate answers beside them); every other metric declared with a readiness
# role and a gate (analysis/metric_registry.py, a plugin's too) is checked by `_gate`
WRITTEN_OUT = frozenset(
    {
        Metric.STRICT_ACCURACY,
        Metric.ACCURACY_GOLD_SHORTER,
        Metric.ACCURACY_GOLD_LONGER,
        Metric.POSITION_INCONSISTENCY,
        Metric.FLIP_RATE,
        Metric.POSITION_INCONSISTENCY_INCREASE,
    }
)


def wanted() -> frozenset[str]:
    """What the verdict reads: the metrics declared with a readiness role, read when a verdict is made
    (a metric registered later, or by a plugin, takes part)."""
    return frozenset([*read_by("invariance"), *read_by("baseline")])


def _bounds(rec: MetricRecord) -> tuple[float | None, float | None, str]:
    """The interval that decides (small_n.decisive): item-level where the record has one."""
    return decisive(rec)


def _few_items(rec: MetricRecord, settings: ReportSettings) -> str:
    """The reason a check on too few items cannot pass ("" when it has enough, or its items are unknown)."""
    if not too_few(rec, settings.min_items):
        return ""
    return f"; only {rec.n_items} items, fewer than the {settings.min_items} a pass needs"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100.0 * x:.1f}%"


def _pp(x: float | None) -> str:
    return "n/a" if x is None else f"{100.0 * x:+.1f} pp"


def _scaled(spec: MetricSpec, x: float | None) -> str:
    if spec.scale == "percent":
        return _pct(x)
    if spec.scale == "points":
        return _pp(x)
    return "n/a" if x is None else f"{x:.3g}"


class _Part:
    """One part of a verdict: its checks' outcomes and their reasons. `open` counts the checks an
    interval left undecided (it straddles the limit): only those can more items decide."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.fails: list[bool] = []
        self.passes: list[bool] = []
        self.open = 0

    def check(self, reason: str, *, fail: bool, ok: bool) -> None:
        self.reasons.append(reason)
        self.fails.append(fail)
        self.passes.append(ok)
        self.open += int(not fail and not ok)

    def unknown(self, reason: str) -> None:
        """A check with nothing to measure: no interval, and more items of the same kind cannot help."""
        self.reasons.append(reason)
        self.fails.append(False)
        self.passes.append(False)

    def status(self) -> Status:
        if any(self.fails):
            return "fail"
        return "pass" if self.passes and all(self.passes) else "inconclusive"

    def deciding(self) -> str | None:
        """The one reason that decided a part that did not pass: its first failed check, else its
        first undecided one (what `judgebench run` prints beside FAIL / INCONCLUSIVE)."""
        for reason, fail in zip(self.reasons, self.fails, strict=True):
            if fail:
                return reason
        for reason, ok in zip(self.reasons, self.passes, strict=True):
            if not ok:
                return reason
        return None


def _word(fail: bool, ok: bool, *, above: str = "above", within: str = "within") -> str:
    return above if fail else (within if ok else f"not clearly {within}")


Table = dict[tuple[str, str, str], MetricRecord]


def _answered(judge: str, condition: str, table: Table) -> int:
    """Answered pair judgments of the judge in a condition (the invalid rate's n): 0 when every call
    failed, or none was made, or the judge was not judged in that condition at all."""
    rec = table.get((judge, condition, Metric.INVALID_RATE))
    return 0 if rec is None or rec.n is None else int(rec.n)


def _no_answers(judge: str, condition: str, table: Table) -> str:
    missing = table.get((judge, condition, Metric.MISSING_RATE))
    failed = 0
    if missing is not None and missing.n is not None and missing.value is not None:
        failed = round(missing.n * missing.value)
    if failed:
        return (
            f"no answered {condition} judgment: all {failed:,} {condition} call(s) failed; more items cannot "
            "help: rerun `judgebench judge` to retry them (and check the judge's key, model and endpoint)"
        )
    return (
        f"no {condition} judgment of this judge: it was not judged in {condition}; more items cannot help: "
        f"judge it with {condition} among the conditions"
    )


def _baseline(judge: str, table: Table, settings: ReportSettings) -> _Part:
    """PROTOCOL §4, baseline (en): accuracy above chance, and on both sides of the split by the gold
    output's length where the texts are known (issue 47), position inconsistency within its limit,
    no degenerate answering (one raw answer in >= max_answer_share of valid judgments, or an invalid
    rate above max_invalid_rate)."""
    part = _Part()
    level = f"{100.0 * settings.confidence:g}%"
    if not _answered(judge, SOURCE, table):
        part.unknown(_no_answers(judge, SOURCE, table))
        return part
    acc = table.get((judge, SOURCE, Metric.STRICT_ACCURACY))
    if acc is None or acc.value is None or acc.ci_low is None or acc.ci_high is None:
        part.unknown("en accuracy unknown (no answered en judgment with a label)")
    else:
        low, high, method = _bounds(acc)
        fail = high is not None and high <= settings.chance
        ok = low is not None and low > settings.chance
        known = any(table.get((judge, SOURCE, metric)) is not None for metric, _, _ in SIDES)
        note = "" if known else " (the outputs' texts were not available: the split by length was not read)"
        part.check(
            f"en strict accuracy {_pct(acc.value)} ({level} {method} interval {_pct(low)}-{_pct(high)}, "
            f"n = {acc.n}) is {_word(fail, ok, above='not above', within='above')} chance "
            f"{_pct(settings.chance)}{note}",
            fail=fail,
            ok=ok,
        )
    _length_splits(part, judge, table, settings)
    pos = table.get((judge, SOURCE, Metric.POSITION_INCONSISTENCY))
    if pos is None or pos.value is None or pos.ci_low is None or pos.ci_high is None:
        part.unknown("en position inconsistency unknown (no item valid in both orders)")
    else:
        fail, ok = (
            pos.ci_low > settings.max_position_inconsistency,
            pos.ci_high <= settings.max_position_inconsistency,
        )
        part.check(
            f"en position inconsistency {_pct(pos.value)} ({level} interval {_pct(pos.ci_low)}-"
            f"{_pct(pos.ci_high)}, n = {pos.n} items) is {_word(fail, ok)} the limit "
            f"{_pct(settings.max_position_inconsistency)}",
            fail=fail,
            ok=ok,
        )
    for reason in _degenerate(judge, table, settings):
        part.check(reason, fail=True, ok=False)
    _declared_gates(part, "baseline", judge, SOURCE, table=table, settings=settings)
    return part


SIDES = (
    (Metric.ACCURACY_GOLD_SHORTER, "shorter", "longer"),
    (Metric.ACCURACY_GOLD_LONGER, "longer", "shorter"),
)


def _wider(rec: MetricRecord) -> tuple[float | None, float | None]:
    """The wider of the record's interval (Wilson over items) and its item-clustered bootstrap."""
    lows = [x for x in (rec.ci_low, rec.boot_low) if x is not None]
    highs = [x for x in (rec.ci_high, rec.boot_high) if x is not None]
    return (min(lows) if lows else None), (max(highs) if highs else None)


def _length_splits(part: _Part, judge: str, table: Table, settings: ReportSettings) -> None:
    """Above chance on both sides of the length split (issue 47): a judge that picks the shorter (or
    the longer) output scores well where the gold output is that one and near 0 on the other side,
    so its overall accuracy can clear chance on data with a length artefact (LLMBar: the gold output
    is the shorter in 7 items of 10); its accuracy on the other side cannot."""
    level = f"{100.0 * settings.confidence:g}%"
    recs = {metric: table.get((judge, SOURCE, metric)) for metric, _, _ in SIDES}
    if all(rec is None for rec in recs.values()):
        return
    for metric, side, other in SIDES:
        rec = recs[metric]
        if rec is None or rec.value is None:
            part.unknown(
                f"no en item whose gold output is the {side} one (by tokens): this data cannot tell the "
                f"judge from the rule 'pick the {other} output'; more items of the same kind cannot help"
            )
            continue
        low, high = _wider(rec)
        fail = high is not None and high <= settings.chance
        few = _few_items(rec, settings)
        ok = low is not None and low > settings.chance and not few
        line = (
            f"chance {_pct(settings.chance)}"
            + (f": the judge leans to the {other} output" if fail else "")
            + few
        )
        part.check(
            f"en strict accuracy where the gold output is the {side} one (by tokens) {_pct(rec.value)} "
            f"({level} interval {_pct(low)}-{_pct(high)}, the wider of Wilson over items and the "
            f"item-clustered bootstrap; n = {rec.n} judgments) is "
            f"{_word(fail, ok, above='not above', within='above')} {line}",
            fail=fail,
            ok=ok,
        )


def _degenerate(judge: str, table: Table, settings: ReportSettings) -> list[str]:
    """Reasons the judge answers degenerately in en (point estimates: this describes, not infers)."""

    def value(metric: Metric) -> float | None:
        rec = table.get((judge, SOURCE, metric))
        return None if rec is None else rec.value

    out = []
    a, tie, invalid = value(Metric.POSITION_A_RATE), value(Metric.TIE_RATE), value(Metric.INVALID_RATE)
    if a is not None and tie is not None:
        shares = {'"A"': a, '"B"': max(0.0, 1.0 - a - tie), '"Tie"': tie}
        answer, share = max(shares.items(), key=lambda kv: kv[1])
        if share >= settings.max_answer_share:
            out.append(
                f"degenerate: answers {answer} in {_pct(share)} of valid en judgments "
                f"(at least {_pct(settings.max_answer_share)})"
            )
    if invalid is not None and invalid > settings.max_invalid_rate:
        out.append(
            f"degenerate: {_pct(invalid)} of en answers are invalid (above {_pct(settings.max_invalid_rate)})"
        )
    return out


def _invariance(judge: str, target: str, table: Table, settings: ReportSettings) -> _Part:
    part = _Part()
    level = f"{100.0 * settings.confidence:g}%"
    if not _answered(judge, target, table):
        part.unknown(_no_answers(judge, target, table))
        return part
    pair = pair_name(SOURCE, target)
    flip = table.get((judge, pair, Metric.FLIP_RATE))
    f_low, f_high, f_method = _bounds(flip) if flip is not None else (None, None, "")
    if flip is None or flip.value is None or f_low is None or f_high is None:
        part.unknown(f"no en/{target} pairs with two valid verdicts: the flip rate is unknown")
    else:
        few = _few_items(flip, settings)
        fail, ok = f_low > settings.max_flip_rate, f_high <= settings.max_flip_rate and not few
        part.check(
            f"flip rate en->{target} {_pct(flip.value)} ({level} {f_method} interval "
            f"{_pct(f_low)}-{_pct(f_high)}, n = {flip.n} pairs) is {_word(fail, ok)} the limit "
            f"{_pct(settings.max_flip_rate)}{few}",
            fail=fail,
            ok=ok,
        )
    inc = table.get((judge, pair, Metric.POSITION_INCONSISTENCY_INCREASE))
    if inc is None or inc.value is None or inc.ci_low is None or inc.ci_high is None:
        part.unknown(f"position inconsistency increase en->{target} unknown (no items valid in both orders)")
    else:
        i_low, i_high, method = _bounds(inc)
        few = _few_items(inc, settings)
        fail = i_low is not None and i_low > settings.max_position_increase
        ok = i_high is not None and i_high <= settings.max_position_increase and not few
        part.check(
            f"position inconsistency {target} minus en {_pp(inc.value)} ({level} {method} interval "
            f"{_pp(i_low)} to {_pp(i_high)}, n = {inc.n} items) is {_word(fail, ok)} the limit "
            f"{_pp(settings.max_position_increase)}{few}",
            fail=fail,
            ok=ok,
        )
    _declared_gates(part, "invariance", judge, target, table=table, settings=settings)
    return part


def _gate(
    part: _Part, spec: MetricSpec, rec: MetricRecord | None, where: str, settings: ReportSettings
) -> None:
    """A declared gate (MetricSpec.gate): the metric's deciding interval against its limit, at or
    below it (`at_most`) or above it; on fewer than `min_items` items it may fail but not pass."""
    assert spec.gate is not None
    name = f"{spec.prose} {where}"
    low, high, method = _bounds(rec) if rec is not None else (None, None, "")
    if rec is None or rec.value is None or low is None or high is None:
        part.unknown(f"{name} unknown (no record with an interval): its readiness gate cannot be read")
        return
    limit, few = spec.gate.threshold(settings), _few_items(rec, settings)
    if spec.gate.at_most:
        fail, ok = low > limit, high <= limit and not few
        words = _word(fail, ok)
    else:
        fail, ok = high <= limit, low > limit and not few
        words = _word(fail, ok, above="not above", within="above")
    part.check(
        f"{name} {_scaled(spec, rec.value)} ({100.0 * settings.confidence:g}% {method} interval "
        f"{_scaled(spec, low)} to {_scaled(spec, high)}, n = {rec.n}) is {words} the limit "
        f"{_scaled(spec, limit)}{few}",
        fail=fail,
        ok=ok,
    )


def _declared_gates(
    part: _Part, role: Role, judge: str, target: str, *, table: Table, settings: ReportSettings
) -> None:
    """The gates of the declared metrics whose checks are not written out here, in declaration order:
    a pair metric read at en->target, a condition metric at the condition the part reads."""
    for spec in gated(role):
        if spec.name in WRITTEN_OUT:
            continue
        where = pair_name(SOURCE, target) if spec.per == "pair" else target
        _gate(part, spec, table.get((judge, where, spec.name)), where, settings)


def _combine(baseline: Status, invariance: Status, complete: bool) -> Status:
    if "fail" in (baseline, invariance):
        return "fail"
    if baseline == invariance == "pass" and complete:
        return "pass"
    return "inconclusive"


def _table(records: list[MetricRecord], settings: ReportSettings) -> Table:
    table: Table = {}
    read = wanted()
    for rec in records:
        if rec.subset != ALL or rec.filtered != settings.readiness_filtered or rec.metric not in read:
            continue
        if rec.judge == MEAN_JUDGE or is_comparison(rec.judge):
            continue
        table[(rec.judge, rec.condition, rec.metric)] = rec
    return table


def assess_readiness(
    records: list[MetricRecord], settings: ReportSettings, *, complete: bool = True
) -> list[ReadinessVerdict]:
    """One verdict per judge and target condition (subset `all`): the en baseline and the invariance
    en->c, each with its reasons. A judge judged in en only gets one verdict for `en`: its baseline,
    with invariance not assessed (so never `pass`). An incomplete run gives no `pass`."""
    table = _table(records, settings)
    judges = list(dict.fromkeys(judge for judge, _, _ in table))
    prefix = pair_name(SOURCE, "")
    verdicts: list[ReadinessVerdict] = []
    for judge in judges:
        base = _baseline(judge, table, settings)
        targets = [
            c.removeprefix(prefix)
            for (j, c, m) in table
            if j == judge and m == Metric.FLIP_RATE and c.startswith(prefix)
        ]
        for target in targets or [SOURCE]:
            if target == SOURCE:
                inv = _Part()
                inv.unknown(
                    "judged in en only: invariance not assessed, so no pass; more en items cannot give one: "
                    "judge it in a target condition (translate first)"
                )
            else:
                inv = _invariance(judge, target, table, settings)
            status = _combine(base.status(), inv.status(), complete)
            reasons = [*inv.reasons, *base.reasons]
            if status == "inconclusive" and (base.open or inv.open):
                reasons.append("more items (or a less variable judge) are needed to decide")
            if not complete:
                reasons.append(
                    "the run is incomplete (planned calls without an answer): computed on what exists, "
                    "and no pass until every planned call is answered"
                )
            verdicts.append(
                ReadinessVerdict(
                    judge=judge,
                    condition=target,
                    status=status,
                    baseline=base.status(),
                    invariance=inv.status(),
                    reasons=reasons,
                    complete=complete,
                    why={
                        name: reason
                        for name, reason in (("baseline", base.deciding()), ("invariance", inv.deciding()))
                        if reason is not None
                    },
                )
            )
    return verdicts
