"""The readiness verdict of a judge that `judge --until-settled` stopped early: the sequence's own.

A judge stopped because its verdicts were decided ("settled") was stopped at a data-dependent time:
fixed-n intervals computed on the items it judged are not valid there (peeking inflates their
error), and may even read `inconclusive` for a verdict the sequence decided. So its verdict, its
two parts and the intervals in its reasons are the anytime-valid confidence sequences' at the stop
(`analysis.sequential`), labelled `intervals = "anytime-valid"`. A judge that ran out of items was
judged on every item, as in a fixed design: its verdict is the report's fixed-n one, with the stop
said. A judge still `running` or `interrupted` makes the run incomplete (no pass).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgebench.analysis.findings import SOURCE, ReadinessVerdict, ReportSettings, Status
from judgebench.analysis.readiness_checks import assess_readiness
from judgebench.records import MetricRecord
from judgebench.records.manifest import SequentialCheck, SequentialStop

ANYTIME = "anytime-valid"


def _pct(x: float | None, signed: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{100.0 * x:+.1f} pp" if signed else f"{100.0 * x:.1f}%"


_WORDS = {  # check name prefix -> (what, the comparison when fail / ok / open)
    "en_accuracy": ("en strict accuracy", ("not above", "above", "not clearly above"), "chance"),
    "en_position_inconsistency": ("en position inconsistency", None, "the limit"),
    "en_share_a": ('en share of "A" answers', None, "the degenerate share"),
    "en_share_b": ('en share of "B" answers', None, "the degenerate share"),
    "en_share_tie": ('en share of "Tie" answers', None, "the degenerate share"),
    "en_invalid_rate": ("en invalid rate", None, "the limit"),
    "flip_rate": ("flip rate en->{c}", None, "the limit"),
    "position_increase": ("position inconsistency {c} minus en", None, "the limit"),
}


def check_reason(check: SequentialCheck, confidence: float) -> str:
    """One check at the stop, in the words of the fixed-n reasons, its interval labelled."""
    kind = check.name.split(":", 1)[0]
    what, words, against = _WORDS.get(kind, (check.name, None, "the limit"))
    fail, ok, open_ = words or ("above", "within", "not clearly within")
    word = {"fail": fail, "ok": ok}.get(check.state, open_)
    signed = kind == "position_increase"
    level = f"{100.0 * confidence:g}%"
    return (
        f"{what.format(c=check.condition)} {_pct(check.estimate, signed)} ({ANYTIME} {level} interval "
        f"{_pct(check.low, signed)} to {_pct(check.high, signed)}, n = {check.n} items) is {word} "
        f"{against} {_pct(check.limit, signed)}"
    )


def _part(checks: Sequence[SequentialCheck]) -> Status:
    if any(c.state == "fail" for c in checks):
        return "fail"
    return "pass" if checks and all(c.state == "ok" for c in checks) else "inconclusive"


def stop_reason(stop: SequentialStop) -> str:
    where = f"after {stop.items} of {stop.items_total} items ({stop.calls} of {stop.calls_full} calls)"
    if stop.reason == "settled":
        return (
            f"until-settled: settled {where}; the verdict and its intervals are the {ANYTIME} confidence "
            "sequences' (fixed-n intervals are not valid at a data-dependent stop)"
        )
    if stop.reason == "items exhausted":
        return f"until-settled: items exhausted {where}; every item judged, so the verdict is the fixed-n one"
    level = f"{100.0 * stop.confidence:g}%"
    intervals = "; ".join(
        f"{c.name} {_num(c.low)} to {_num(c.high)} (n = {c.n}, {c.state})" for c in stop.checks if c.n
    )
    return f"until-settled: {stop.reason} {where}; {ANYTIME} {level} intervals so far: {intervals}"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def sequence_verdict(judge: str, condition: str, stop: SequentialStop) -> ReadinessVerdict:
    """The verdict of a settled judge for one target, from its stop's checks."""
    base = [c for c in stop.checks if c.condition == SOURCE]
    inv = [c for c in stop.checks if c.condition == condition and condition != SOURCE]
    status = stop.verdicts[condition]
    en_only = "judged in en only: invariance not assessed, so no pass"
    reasons = [check_reason(c, stop.confidence) for c in [*inv, *base] if c.n]
    if condition == SOURCE:
        reasons.insert(0, en_only)
    why = {"baseline": _deciding(base, stop.confidence)}
    why["invariance"] = en_only if condition == SOURCE else _deciding(inv, stop.confidence)
    return ReadinessVerdict(
        judge=judge,
        condition=condition,
        status=status if status in ("pass", "fail") else "inconclusive",  # type: ignore[arg-type]
        baseline=_part(base),
        invariance=_part(inv) if condition != SOURCE else "inconclusive",
        reasons=[*reasons, stop_reason(stop)],
        intervals="anytime-valid",
        why={part: reason for part, reason in why.items() if reason is not None},
    )


def _deciding(checks: Sequence[SequentialCheck], confidence: float) -> str | None:
    """A part's deciding reason (as readiness's `why`): its first failed check, else its first open."""
    for state in ("fail", "open"):
        for c in checks:
            if c.state == state and c.n:
                return check_reason(c, confidence)
    return None


def with_stops(
    verdicts: Sequence[ReadinessVerdict],
    records: list[MetricRecord],
    settings: ReportSettings,
    stops: Mapping[str, SequentialStop],
) -> tuple[list[ReadinessVerdict], list[str]]:
    """The verdicts of a `judge --until-settled` run, and the judges it has not finished."""
    if not stops:
        return list(verdicts), []
    unfinished = sorted(name for name, stop in stops.items() if not stop.final)
    if unfinished:
        verdicts = assess_readiness(records, settings, complete=False)
    out = []
    for v in verdicts:
        stop = stops.get(v.judge)
        if stop is not None and stop.reason == "settled" and v.condition in stop.verdicts:
            v = sequence_verdict(v.judge, v.condition, stop)
        elif stop is not None:
            v = v.model_copy(update={"reasons": [*v.reasons, stop_reason(stop)]})
        out.append(v)
    return out, unfinished
