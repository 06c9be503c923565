"""A judge `--until-settled` stopped as settled gets the sequence's own verdict and intervals, labelled
anytime-valid, never `inconclusive`; one that ran out of items keeps the fixed-n verdict; one still
running makes the run incomplete."""

from __future__ import annotations

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.settled import with_stops
from judgebench.records.manifest import SequentialCheck, SequentialStop
from tests.analysis.builders import pair

SETTINGS = ReportSettings(bootstrap_samples=0)


def _judgments(n: int, flip_every: int) -> list:
    """n items judged right in en; in zh every `flip_every`-th item flips in both orders."""
    out = []
    for i in range(n):
        item = f"Natural/{i}"
        for order in ("orig", "swap"):
            out.append(pair("J", item, "en", order, "1", 1))
            out.append(pair("J", item, "zh", order, "2" if i % flip_every == 0 else "1", 1))
    return out


def _stop(reason: str, verdict: str, flip_state: str) -> SequentialStop:
    def check(name: str, condition: str, limit: float, est: float, low: float, high: float, state: str):
        return SequentialCheck(
            name=name, condition=condition, limit=limit, n=40, estimate=est, low=low, high=high, state=state
        )  # type: ignore[arg-type]

    return SequentialStop(
        reason=reason,  # type: ignore[arg-type]
        items=40, items_total=419, calls=320, calls_full=3352, seed=0, round_items=20, confidence=0.95,
        verdicts={"zh": verdict},
        checks=[
            check("en_accuracy", "en", 0.5, 1.0, 0.91, 1.0, "ok"),
            check("en_position_inconsistency", "en", 0.2, 0.0, 0.0, 0.09, "ok"),
            check("flip_rate:zh", "zh", 0.15, 0.2, 0.151, 0.33, flip_state),
            check("position_increase:zh", "zh", 0.05, 0.0, -0.08, 0.04, "ok"),
        ],
    )  # fmt: skip


def test_a_settled_stop_reads_the_sequences_verdict_not_the_fixed_n_one() -> None:
    """40 items, 20% flips: the Wilson interval on the judged items straddles the 15% limit
    (inconclusive), while the (planted) sequence had settled on fail: the verdict is fail, its own."""
    analysis = analyze(_judgments(40, 5), settings=SETTINGS)
    (fixed,) = analysis.readiness
    assert fixed.status == "inconclusive" and fixed.intervals == "fixed-n"
    stops = {"J": _stop("settled", "fail", "fail")}
    (v,), unfinished = with_stops(analysis.readiness, analysis.records, SETTINGS, stops)
    assert unfinished == []
    assert (v.status, v.baseline, v.invariance, v.intervals) == ("fail", "pass", "fail", "anytime-valid")
    assert v.reasons[0] == (
        "flip rate en->zh 20.0% (anytime-valid 95% interval 15.1% to 33.0%, n = 40 items) is above the "
        "limit 15.0%"
    )
    assert "more items" not in " ".join(v.reasons)
    assert v.reasons[-1].startswith("until-settled: settled after 40 of 419 items (320 of 3352 calls)")


def test_a_settled_pass_is_a_pass_even_where_fixed_n_intervals_are_wide() -> None:
    analysis = analyze(_judgments(40, 1000), settings=SETTINGS)
    stop = _stop("settled", "pass", "ok")
    (v,), _ = with_stops(analysis.readiness, analysis.records, SETTINGS, {"J": stop})
    assert (v.status, v.baseline, v.invariance, v.intervals) == ("pass", "pass", "pass", "anytime-valid")


def test_items_exhausted_keeps_the_fixed_n_verdict_and_running_gives_no_pass() -> None:
    analysis = analyze(_judgments(300, 1000), settings=SETTINGS)
    (fixed,) = analysis.readiness
    assert fixed.status == "pass"
    (v,), unfinished = with_stops(
        analysis.readiness, analysis.records, SETTINGS, {"J": _stop("items exhausted", "pass", "ok")}
    )
    assert (v.status, v.intervals, unfinished) == ("pass", "fixed-n", [])
    assert v.reasons[:-1] == fixed.reasons and "every item judged" in v.reasons[-1]
    stops = {"J": _stop("running", "pass", "ok")}
    (v,), unfinished = with_stops(analysis.readiness, analysis.records, SETTINGS, stops)
    assert unfinished == ["J"] and v.status == "inconclusive" and v.intervals == "fixed-n"
    assert "anytime-valid 95% intervals so far" in v.reasons[-1]
