"""Builders for hand-written judgment fixtures."""

from __future__ import annotations

from judgebench.records import Judgment

WINNER = {("orig", "1"): "A", ("orig", "2"): "B", ("swap", "1"): "B", ("swap", "2"): "A"}


def pair(
    judge: str,
    item: str,
    condition: str,
    order: str,
    verdict: str | None,
    label: int,
    *,
    confidence: float | None = None,
) -> Judgment:
    """A pair judgment; verdict None is a missing call, 'invalid' an unreadable answer."""
    if verdict is None:
        winner = None
    elif verdict == "tie":
        winner = "Tie"
    elif verdict == "invalid":
        winner = "invalid"
    else:
        winner = WINNER[(order, verdict)]
    return Judgment(
        judge=judge,
        item_id=item,
        subset=item.rsplit("/", 1)[0],
        kind="pair",
        condition=condition,
        order=order,
        raw=None if verdict is None else "answer",
        winner=winner,  # type: ignore[arg-type]
        verdict=verdict,
        error="HTTP 500 after 8 attempts" if verdict is None else None,
        label=label,  # type: ignore[arg-type]
        confidence=confidence,
    )


def probe(judge: str, item: str, order: str, verdict: str | None, target: str = "zh") -> Judgment:
    """A tie-probe judgment for `target` (verdict en / target / tie / invalid, None = missing)."""
    return Judgment(
        judge=judge,
        item_id=item,
        subset=item.rsplit("/", 1)[0],
        kind="tie_probe",
        condition=target,
        order=order,
        raw=None if verdict is None else "answer",
        winner=None if verdict is None else "Tie",
        verdict=verdict,
        error="timeout" if verdict is None else None,
        label=1,
    )
