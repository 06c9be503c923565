"""Which judge of run A meets which of run B, and their verdicts side by side, unit by unit.

Judges are matched by name when both runs hold the same name (a judge re-run on another day, under
another template), one to one when each run holds exactly one judge (a judge upgrade: `sim:x/1` then
`sim:x/2`, gpt-4.1 then gpt-5), or as named (`--judge-a X --judge-b Y`, repeatable). Every unit of a
matched judge is kept: those in one run only are counted (`Coverage`) before the paired rows are
compared, so nothing is dropped without a number saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgebench.compare.compare_doc import Coverage, JudgeMatch
from judgebench.errors import InputError

UNIT = ["item_id", "kind", "condition", "order"]
_KEPT = ["subset", "label", "outcome", "winner", "line"]
# an item list in compare.json is capped at this many ids (the count is always whole)
LISTED_ITEMS = 200


@dataclass(frozen=True)
class Side:
    """One run's judgments as the analysis columns (`frame`: judgment_table's, last line per call key)
    and the file they came from, named in every message about them."""

    frame: pd.DataFrame
    source: str

    def judges(self) -> list[str]:
        return sorted(set(self.frame["judge"].tolist()))


def outcome(frame: pd.DataFrame) -> pd.Series:
    """A unit's verdict as compared: the normalised verdict ("1", "2", "tie", "invalid"; a tie-probe's
    "en", "zh", ...), "invalid" for an unreadable answer, None for a call that got no answer."""
    values = [
        v if isinstance(v, str) else "invalid" if w == "invalid" else None
        for v, w in zip(frame["verdict"].tolist(), frame["winner"].tolist(), strict=True)
    ]
    return pd.Series(values, index=frame.index, dtype=object)


def match_judges(
    a: Side, b: Side, named_a: Sequence[str] = (), named_b: Sequence[str] = ()
) -> list[JudgeMatch]:
    """The judge pairs to compare (see the module's docstring); a name that is not in its run, or runs
    whose judges cannot be paired without being told, are errors naming the file and its judges."""
    judges_a, judges_b = a.judges(), b.judges()
    if len(named_a) != len(named_b):
        raise InputError(
            f"--judge-a given {len(named_a)} time(s) and --judge-b {len(named_b)}: give them in pairs"
        )
    if named_a:
        for name, side, there in ((named_a, a, judges_a), (named_b, b, judges_b)):
            for judge in name:
                if judge not in there:
                    raise InputError(
                        f"no judge '{judge}' here; its judges: {', '.join(there)}", path=side.source
                    )
        return [JudgeMatch(judge_a=x, judge_b=y, how="named") for x, y in zip(named_a, named_b, strict=True)]
    common = [j for j in judges_a if j in set(judges_b)]
    if common:
        return [JudgeMatch(judge_a=j, judge_b=j, how="same name") for j in common]
    if len(judges_a) == 1 and len(judges_b) == 1:
        return [JudgeMatch(judge_a=judges_a[0], judge_b=judges_b[0], how="one judge each")]
    raise InputError(
        f"the runs share no judge name and do not hold one judge each (A: {', '.join(judges_a)}; "
        f"B: {', '.join(judges_b)}): say which to compare with --judge-a NAME --judge-b NAME",
        path=f"{a.source} and {b.source}",
    )


def _units(side: Side, judge: str) -> pd.DataFrame:
    rows = side.frame[side.frame["judge"] == judge]
    rows = rows.assign(outcome=outcome(rows))
    return rows[UNIT + _KEPT].reset_index(drop=True)


def paired_units(a: Side, b: Side, match: JudgeMatch) -> tuple[pd.DataFrame, Coverage]:
    """The units of both runs' judges side by side (`outcome_a`/`outcome_b`, `winner_*`, `line_*`, the
    gold `label`), with what one run holds that the other lacks."""
    ua, ub = _units(a, match.judge_a), _units(b, match.judge_b)
    merged = ua.merge(ub, on=UNIT, how="outer", suffixes=("_a", "_b"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    _check_same_items(both, a, b)
    only_a = merged[merged["_merge"] == "left_only"]
    only_b = merged[merged["_merge"] == "right_only"]
    items_a, items_b = set(ua["item_id"]), set(ub["item_id"])
    conds_a, conds_b = set(ua["condition"]), set(ub["condition"])
    coverage = Coverage(
        judge_a=match.judge_a,
        judge_b=match.judge_b,
        units_a=len(ua),
        units_b=len(ub),
        units_only_a=len(only_a),
        units_only_b=len(only_b),
        items_only_a=sorted(items_a - items_b)[:LISTED_ITEMS],
        items_only_b=sorted(items_b - items_a)[:LISTED_ITEMS],
        items_only_a_total=len(items_a - items_b),
        items_only_b_total=len(items_b - items_a),
        conditions_only_a=sorted(conds_a - conds_b),
        conditions_only_b=sorted(conds_b - conds_a),
    )
    paired = both.assign(
        subset=both["subset_a"],
        label=both["label_a"].where(both["label_a"].notna(), both["label_b"]),
        judge_a=match.judge_a,
        judge_b=match.judge_b,
    )
    keep = ["judge_a", "judge_b", *UNIT, "subset", "label"]
    keep += ["outcome_a", "outcome_b", "winner_a", "winner_b", "line_a", "line_b"]
    return paired[keep].reset_index(drop=True), coverage


def _check_same_items(both: pd.DataFrame, a: Side, b: Side) -> None:
    """An item id in both runs with two different gold labels is two different items: the runs are
    not over the same data, and comparing their verdicts would mean nothing."""
    la, lb = both["label_a"], both["label_b"]
    clash = both[la.notna() & lb.notna() & (la != lb)]
    if len(clash):
        first = clash.iloc[0]
        raise InputError(
            f"gold label {int(first['label_a'])} here but {int(first['label_b'])} in {b.source} "
            f"({clash['item_id'].nunique()} item(s) differ): the runs are not over the same items",
            path=a.source,
            item=str(first["item_id"]),
        )


def pair_runs(a: Side, b: Side, matches: Sequence[JudgeMatch]) -> tuple[pd.DataFrame, list[Coverage]]:
    """Every matched judge pair's paired units, one frame; an error when no unit is in both runs."""
    frames, coverage = [], []
    for match in matches:
        paired, cov = paired_units(a, b, match)
        frames.append(paired)
        coverage.append(cov)
    units = pd.concat(frames, ignore_index=True)
    if units.empty:
        items_a = sorted(set(a.frame["item_id"]))
        items_b = sorted(set(b.frame["item_id"]))
        conds_a = sorted(set(a.frame["condition"]))
        conds_b = sorted(set(b.frame["condition"]))
        raise InputError(
            f"no unit (item, condition, order) is in both runs: A has {len(items_a)} item(s) in "
            f"{', '.join(conds_a)} (e.g. {', '.join(items_a[:3])}), B {len(items_b)} in "
            f"{', '.join(conds_b)} (e.g. {', '.join(items_b[:3])}); compare runs over the same items",
            path=f"{a.source} and {b.source}",
        )
    return units, coverage
