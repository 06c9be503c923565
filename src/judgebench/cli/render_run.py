"""What `judgebench run` prints at its end, and the readiness lines `report` shares with it: the
verdicts, each one that did not pass with the reason that decided each part, and readiness.json."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from judgebench.cli.app import console
from judgebench.cli.render import note

if TYPE_CHECKING:
    from judgebench.api import PipelineResult, ReadinessDoc


def pipeline(result: PipelineResult) -> list[str]:
    """The end of `judgebench run`; returns the problems that make it exit non-zero."""
    problems: list[str] = []
    outcome = result.translate.outcome if result.translate is not None else None
    if outcome is not None and outcome.failed:
        problems.append(
            f"{len(outcome.failed)} item(s) could not be translated (judged in en only; "
            f"see {result.run_dir}/translation_failures.jsonl)"
        )
        for failure in outcome.failed[:5]:
            note(f"  {failure.item_id}: {failure.reason}")
        if len(outcome.failed) > 5:
            note(f"  ... and {len(outcome.failed) - 5} more")
    if result.judge is not None:
        for name, o in result.judge.outcomes.items():
            console.print(
                f"{name}: {o.verdicts} verdicts, {o.invalid} invalid, {o.missing} missing", markup=False
            )
            if o.failures:
                problems.append(f"{name}: {len(o.failures)} judge call(s) failed")
            if o.stopped:
                problems.append(f"{name}: stopped: {o.stopped}")
    if result.bbe_error is not None:
        note(f"bbe: {result.bbe_error}")
    if result.readiness is not None:
        verdicts(result.readiness, report_html=str(result.report_html))
        readiness_file(result.readiness, str(result.run_dir / "readiness.json"))
    timing = ", ".join(f"{k} {v:.1f}s" for k, v in result.seconds.items())
    console.print(f"done in {sum(result.seconds.values()):.1f}s ({timing})", markup=False)
    console.print(f"report: {result.report_html}", markup=False)
    return problems


# --- readiness ------------------------------------------------------------------------------------


def readiness_file(doc: ReadinessDoc, path: str) -> None:
    """Where readiness.json is, and a warning on stderr when the run is incomplete."""
    if not doc.complete:
        what = []
        if doc.never_made:
            what.append(f"{doc.never_made:,} planned call(s) never made")
        if doc.failed:
            what.append(f"{doc.failed:,} failed and not retried yet")
        note(
            f"warning: incomplete run ({' and '.join(what)} of {doc.planned:,} planned): verdicts are "
            "computed on what exists and none is `pass`; rerun `judgebench judge` to finish it"
        )
    console.print(f"readiness: {path}", highlight=False, soft_wrap=True, markup=False)


def verdicts(doc: ReadinessDoc, *, report_html: str | None = None) -> None:
    """The readiness verdicts, one line each (the end of `judgebench run`), and under a verdict that
    did not pass the one reason of each part that decided it, and where every reason is."""
    for v in doc.verdicts:
        style = {"pass": "green", "fail": "red"}.get(v.verdict, "yellow")
        console.print(
            f"[{style}]{v.verdict.upper()}[/] {escape(v.judge)} on {escape(v.condition)} "
            f"(baseline {v.baseline}, invariance {v.invariance})",
            highlight=False,
        )
        if v.verdict == "pass":
            continue
        for part, reason in v.why.items():
            console.print(f"  {part}: {reason}", highlight=False, soft_wrap=True, markup=False)
    if any(v.verdict != "pass" for v in doc.verdicts):
        where = (
            f"the Readiness verdict of {report_html}#verdict"
            if report_html
            else "the report's Readiness verdict"
        )
        console.print(
            f"  every reason, with its numbers: readiness.json (below) and {where}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
