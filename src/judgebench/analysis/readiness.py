"""Pass / fail / inconclusive per judge and target condition: may this judge be used in that language?

The papers' practical advice is to test a judge before trusting it on another language. A verdict
is only as good as its interval, so it is read from confidence bounds, never from point estimates:
fail when the evidence says the judge is worse than a threshold (a lower bound above it), pass when
it says the judge is within every threshold (each upper bound at or below it), inconclusive otherwise,
typically because too few items were judged to tell.

The flip-rate bound is the item-clustered bootstrap one when available (an item's two orders are not
independent, so the Wilson interval over (item, order) pairs is too narrow), else Wilson. The
position-inconsistency increase (target minus en, on items valid in both) uses its bootstrap interval,
or a Wald interval for paired proportions when the bootstrap is switched off.
"""

from __future__ import annotations

from typing import Literal

from judgebench.analysis.model import (
    ALL,
    MEAN_JUDGE,
    SOURCE,
    ReadinessVerdict,
    ReportSettings,
    is_comparison,
    pair_name,
)
from judgebench.records import Metric, MetricRecord

WANTED = (Metric.FLIP_RATE, Metric.POSITION_INCONSISTENCY_INCREASE)


def _bounds(rec: MetricRecord) -> tuple[float | None, float | None, str]:
    if rec.boot_low is not None and rec.boot_high is not None:
        return rec.boot_low, rec.boot_high, "item-clustered bootstrap"
    return rec.ci_low, rec.ci_high, str(rec.ci_method or "interval")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100.0 * x:.1f}%"


def _pp(x: float | None) -> str:
    return "n/a" if x is None else f"{100.0 * x:+.1f} pp"


def assess_readiness(records: list[MetricRecord], settings: ReportSettings) -> list[ReadinessVerdict]:
    """One verdict per judge and non-en condition that has an en->c flip rate (subset `all`)."""
    level = 100.0 * settings.confidence
    prefix = pair_name(SOURCE, "")
    table: dict[tuple[str, str, str], MetricRecord] = {}
    for rec in records:
        if rec.subset != ALL or rec.filtered != settings.readiness_filtered or rec.metric not in WANTED:
            continue
        if rec.judge == MEAN_JUDGE or is_comparison(rec.judge) or not rec.condition.startswith(prefix):
            continue
        table[(rec.judge, rec.condition.removeprefix(prefix), rec.metric)] = rec
    verdicts: list[ReadinessVerdict] = []
    for (judge, target, metric), flip in table.items():
        if metric != Metric.FLIP_RATE:
            continue
        reasons: list[str] = []
        fails: list[bool] = []
        passes: list[bool] = []
        f_low, f_high, f_method = _bounds(flip)
        if flip.value is None or f_low is None or f_high is None:
            reasons.append(f"no en/{target} pairs with two valid verdicts: the flip rate is unknown")
            fails.append(False)
            passes.append(False)
        else:
            fail = f_low > settings.max_flip_rate
            ok = f_high <= settings.max_flip_rate
            word = "above" if fail else ("within" if ok else "not clearly within")
            reasons.append(
                f"flip rate en->{target} {_pct(flip.value)} ({level:g}% {f_method} interval "
                f"{_pct(f_low)}-{_pct(f_high)}, n = {flip.n} pairs) is {word} the limit "
                f"{_pct(settings.max_flip_rate)}"
            )
            fails.append(fail)
            passes.append(ok)
        inc = table.get((judge, target, Metric.POSITION_INCONSISTENCY_INCREASE))
        if inc is None or inc.value is None or inc.ci_low is None or inc.ci_high is None:
            reasons.append(
                f"position inconsistency increase en->{target} unknown (no items valid in both orders)"
            )
            fails.append(False)
            passes.append(False)
        else:
            method = str(inc.ci_method or "interval")
            fail = inc.ci_low > settings.max_position_increase
            ok = inc.ci_high <= settings.max_position_increase
            word = "above" if fail else ("within" if ok else "not clearly within")
            reasons.append(
                f"position inconsistency {target} minus en {_pp(inc.value)} ({level:g}% {method} interval "
                f"{_pp(inc.ci_low)} to {_pp(inc.ci_high)}, n = {inc.n} items) is {word} the limit "
                f"{_pp(settings.max_position_increase)}"
            )
            fails.append(fail)
            passes.append(ok)
        status: Literal["pass", "fail", "inconclusive"]
        if any(fails):
            status = "fail"
        elif all(passes):
            status = "pass"
        else:
            status = "inconclusive"
            reasons.append("more items (or a less variable judge) are needed to decide")
        verdicts.append(ReadinessVerdict(judge=judge, condition=target, status=status, reasons=reasons))
    return verdicts
