"""`analyze`: every metric of PROTOCOL §4 per judge x condition x subset x filtered, from judgments.

Why a table-at-a-time design: a full run is 13,408 judgments and several thousand metric records; each
family of metrics is a handful of boolean columns summed by one pandas groupby, intervals are computed
for all records at once (statsmodels accepts arrays), and the item-clustered bootstrap is one matrix
product per item set (`bootstrap.py`). Denominators follow PROTOCOL §4 exactly:

- missing calls (no verdict) are left out of every metric and counted (`missing_rate`, `JudgeSummary`);
- accuracy is over answered judgments with a label, an invalid answer counting as wrong;
- flip rates, gold flips, McNemar and position inconsistency only use pairs whose two verdicts are valid;
- `position_a_rate` and `tie_rate` are over valid judgments, `invalid_rate` over answered ones;
- tie-probe shares are over valid probes.

A pure function of its inputs: reading a run folder is the api layer's job (`api.analyze_run`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judgebench.analysis import settled
from judgebench.analysis.accuracy import pair_records
from judgebench.analysis.adjust import adjust_and_power
from judgebench.analysis.assemble import mean_over_judges, order_table, to_records
from judgebench.analysis.cell_sums import CELL, proportion, sum_cells
from judgebench.analysis.clustered import OwnUnits, start_bootstrap, with_intervals
from judgebench.analysis.comparisons import judge_comparison_records, judge_pair_rows
from judgebench.analysis.findings import Analysis, Completeness, JudgeSummary, ReportSettings
from judgebench.analysis.flips import flip_records, flip_rows
from judgebench.analysis.frame import (
    Layout,
    UnitTables,
    condition_pairs,
    judgment_frame,
    key_codes,
    ordered_conditions,
    pair_flags,
)
from judgebench.analysis.length_artefact import Lengths, length_records, length_units
from judgebench.analysis.length_preference import longer_win_records
from judgebench.analysis.metric_registry import MetricInputs, computed, counted
from judgebench.analysis.position import (
    direction_records,
    direction_rows,
    position_increase_rows,
    position_records,
    position_rows,
)
from judgebench.analysis.probes import length_rows, pooled_probe_records, probe_rows
from judgebench.analysis.readiness_checks import assess_readiness
from judgebench.analysis.rewardbench_score import Weights, leaderboard_records
from judgebench.analysis.self_preference_test import SelfPreferenceInputs, self_preference
from judgebench.analysis.subsets import unique
from judgebench.analysis.tie_probes import tie_probe_records
from judgebench.config.defaults import CONDITION_NAMES
from judgebench.records import CallKey, Judgment, Metric, MetricRecord
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.records.manifest import SequentialStop
from judgebench.records.metrics import HUMAN_METRICS
from judgebench.records.self_preference_report import SelfPreferenceReport

DEFAULT_ORDER = CONDITION_NAMES  # pairs read zh->ls unless the caller says otherwise


def _unit_tables(
    df: pd.DataFrame,
    conditions: Sequence[str],
    judges: Sequence[str],
    probes: Mapping[str, ProbeOrigin] | None = None,
    lengths: pd.DataFrame | None = None,
) -> UnitTables:
    p = pair_flags(df)
    present = set(p["condition"].unique().tolist())
    pairs = condition_pairs([c for c in conditions if c in present], probes)
    flips = flip_rows(p, pairs) if not p.empty else pd.DataFrame()
    pos = position_rows(p) if not p.empty else pd.DataFrame()
    return UnitTables(
        pairs=p,
        flips=flips,
        position=pos,
        increase=position_increase_rows(pos, conditions),
        judge_flips=judge_pair_rows(flips, ["item_id", "order", "condition"], "both", "flip", judges),
        judge_position=judge_pair_rows(pos, ["item_id", "condition"], "pboth", "incon", judges),
        lengths=length_units(p, lengths),
    )


def _with_direction(
    table: pd.DataFrame, layout: Layout, units: UnitTables, confidence: float
) -> pd.DataFrame:
    """The positional McNemar records, and the clustered interval of position_a_rate on its records."""
    if units.pairs.empty:
        return table
    mcnemar, clustered = direction_records(layout, direction_rows(units.pairs), confidence)
    rate = table["metric"] == Metric.POSITION_A_RATE
    merged = table[rate].merge(clustered, on=CELL, how="left")
    merged.index = table.index[rate]
    table = pd.concat([table[~rate], merged, mcnemar]).sort_index(kind="stable")
    return table.reset_index(drop=True)


def _own_units(layout: Layout, df: pd.DataFrame, units: UnitTables, confidence: float) -> list[OwnUnits]:
    """The unit rows of the registered metrics that bring them (MetricSpec.units)."""
    inputs = MetricInputs(layout, df, units, confidence)
    return [(spec.name, spec.units(inputs)) for spec in counted() if spec.units is not None]


def _record_table(
    layout: Layout, df: pd.DataFrame, units: UnitTables, confidence: float, own: Sequence[OwnUnits] = ()
) -> pd.DataFrame:
    """Every family's records (before bootstrap, adjustment and the mean over judges) as one table;
    a registered metric's unit rows (`own`) summed per cell into a proportion."""
    parts = [
        pair_records(layout, units.pairs, confidence) if not units.pairs.empty else pd.DataFrame(),
        flip_records(layout, units.flips, confidence),
        position_records(layout, units.position, units.increase, confidence),
        tie_probe_records(layout, df, confidence),
        judge_comparison_records(layout, units.judge_flips, units.judge_position, confidence),
        length_records(layout, units.lengths, confidence),
        *(spec.compute(MetricInputs(layout, df, units, confidence)) for spec in computed() if spec.compute),
        *(proportion(sum_cells(layout, rows, ["k", "n"]), name, "k", "n", confidence) for name, rows in own),
    ]
    parts = [x for x in parts if not x.empty]
    if not parts:
        return pd.DataFrame(columns=[*CELL, "metric", "value", "n"])
    return _with_direction(pd.concat(parts, ignore_index=True), layout, units, confidence)


PlanKeys = Collection[CallKey] | pd.DataFrame


def plan_frame(planned: PlanKeys) -> pd.DataFrame:
    """Planned call keys as a de-duplicated table (columns CallKey._fields); a table is taken as is."""
    if isinstance(planned, pd.DataFrame):
        return planned[list(CallKey._fields)].drop_duplicates()
    return pd.DataFrame(list(dict.fromkeys(planned)), columns=list(CallKey._fields), dtype=object)


def _never_made(df: pd.DataFrame, plan: pd.DataFrame) -> pd.Series:
    """Per judge, the planned keys with no record (an anti-join: no set of a million tuples)."""
    keys = list(CallKey._fields)
    if plan.empty:
        return pd.Series(dtype=int)
    planned, made = key_codes(plan, df, keys)
    missing = plan.loc[~np.isin(planned, made), "judge"]
    return pd.Series(missing.to_numpy(dtype=object)).value_counts()


def never_made(df: pd.DataFrame, planned: PlanKeys | None) -> pd.Series | None:
    """Per judge, how many planned calls have no record (None without a plan): the anti-join once,
    for `completeness` and `judge_summaries` both."""
    return None if planned is None else _never_made(df, plan_frame(planned))


def completeness(df: pd.DataFrame, planned: PlanKeys | None, never: pd.Series | None = None) -> Completeness:
    """Planned calls against the records the run holds (the last line per key); `never` is
    `never_made(df, planned)` when the caller has it."""
    answered = int(df["verdict"].notna().sum())
    failed = int(df["verdict"].isna().sum())
    if planned is None:
        return Completeness(plan_known=False, planned=len(df), answered=answered, never_made=0, failed=failed)
    count = int((never if never is not None else _never_made(df, plan_frame(planned))).sum())
    return Completeness(
        plan_known=True,
        planned=len(df) + count,  # planned or present: the records are unique per key
        answered=answered,
        never_made=count,
        failed=failed,
    )


def judge_summaries(
    df: pd.DataFrame, planned: PlanKeys | None = None, never: pd.Series | None = None
) -> list[JudgeSummary]:
    """Call accounting per judge, in first-seen order (`never` as for `completeness`)."""
    if never is None:
        never = _never_made(df, plan_frame(planned)) if planned is not None else pd.Series(dtype=int)
    out = []
    for judge, g in df.groupby("judge", sort=False):
        answered = g["verdict"].notna()
        costs = g["cost_usd"].dropna()
        mine = int(never.get(str(judge), 0))
        out.append(
            JudgeSummary(
                judge=str(judge),
                planned=len(g) + mine,
                never_made=mine,
                judgments=len(g),
                answered=int(answered.sum()),
                missing=int((~answered).sum()),
                invalid=int(g["verdict"].eq("invalid").sum()),
                input_tokens=int(g["input_tokens"].sum()),
                output_tokens=int(g["output_tokens"].sum()),
                cost_usd=float(costs.sum()) if len(costs) else None,
            )
        )
    return out


def analyze(
    judgments: Iterable[Judgment],
    *,
    flagged_items: Iterable[str] = (),
    settings: ReportSettings | None = None,
    condition_order: Sequence[str] | None = None,
    planned: PlanKeys | None = None,
    leaderboard: Weights | None = None,
    probes: Mapping[str, ProbeOrigin] | None = None,
    lengths: Lengths | None = None,
) -> Analysis:
    """All metric records, readiness verdicts and call accounting of a set of judgments.

    `flagged_items` are left out of the filtered tables; `condition_order` (the run's target
    conditions, e.g. zh, ls) names pairs zh->ls; without it, the default conditions' order (zh, ls:
    `defaults.CONDITION_NAMES`), then the others by name, whatever order the judgments came in. Nothing
    is read here: a caller with a run folder passes the order it recorded.
    `leaderboard` (a RewardBench-family run) adds the leaderboard-comparable scores; `probes` (probe
    condition -> the condition it was made from, as the judge stage recorded) adds zh->zh+length."""
    settings = settings or ReportSettings()
    # one order for every run: sums (and so the last bits of floats) must not depend on the line
    # order in which a faulty or resumed run happened to write its judgments
    df = judgment_frame(sorted(judgments, key=lambda j: j.call_key()))
    return analyze_table(
        df,
        flagged_items=flagged_items,
        settings=settings,
        condition_order=condition_order,
        planned=planned,
        leaderboard=leaderboard,
        probes=probes,
        lengths=lengths,
    )


def analyze_table(
    df: pd.DataFrame,
    *,
    flagged_items: Iterable[str] = (),
    settings: ReportSettings | None = None,
    condition_order: Sequence[str] | None = None,
    planned: PlanKeys | None = None,
    leaderboard: Weights | None = None,
    probes: Mapping[str, ProbeOrigin] | None = None,
    lengths: Lengths | None = None,
) -> Analysis:
    """`analyze` of a judgment table (one row per call key, sorted by call key: `judgment_frame`
    of sorted judgments, or `judgment_table.read_judgment_table` of a run's file). Without a
    `condition_order`, the default conditions' order, then the others by name."""
    return analyze_inputs(
        df,
        AnalysisInputs(
            flagged_items=frozenset(flagged_items),
            settings=settings or ReportSettings(),
            condition_order=condition_order,
            planned=planned,
            leaderboard=leaderboard,
            probes=dict(probes or {}),
            lengths=lengths or Lengths(),
        ),
    )


@dataclass(frozen=True)
class AnalysisInputs:
    """Everything the analysis of a judgment table reads besides the table: what `analyze_table`
    takes, and what a run folder adds (`api.report` reads it): which output of each item is longer
    (`longer_sides`: the longer_win_rate records; None leaves them out), the self-preference check's
    inputs, records measured outside the judgments (an imported source's own headline numbers, the
    human-label records of `human/`), appended in that order, and where each judge of a `judge
    --until-settled` run stopped. The Analysis returned is finished: nobody patches it afterwards."""

    flagged_items: frozenset[str] = frozenset()
    settings: ReportSettings = field(default_factory=ReportSettings)
    condition_order: Sequence[str] | None = None
    planned: PlanKeys | None = None
    leaderboard: Weights | None = None
    probes: Mapping[str, ProbeOrigin] = field(default_factory=dict)
    lengths: Lengths = field(default_factory=Lengths)
    longer_sides: Mapping[str, str] | None = None
    self_preference: SelfPreferenceInputs | None = None
    outside_records: Sequence[MetricRecord] = ()
    stops: Mapping[str, SequentialStop] = field(default_factory=dict)


def analyze_inputs(df: pd.DataFrame, inputs: AnalysisInputs) -> Analysis:
    """The finished Analysis of a judgment table (as `analyze_table` takes it) and its inputs."""
    settings, probes, lengths = inputs.settings, inputs.probes, inputs.lengths
    flagged = set(inputs.flagged_items)
    layout = Layout(df, flagged)
    order = DEFAULT_ORDER if inputs.condition_order is None else inputs.condition_order
    conditions = ordered_conditions(df, order)
    judges = unique(df["judge"].tolist())

    units = _unit_tables(df, conditions, judges, probes, lengths.outputs)
    own = _own_units(layout, df, units, settings.confidence)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bootstrap") as beside:
        # resampled while the records are made
        boot = start_bootstrap(layout, units, settings, beside, own=own)
        table = _record_table(layout, df, units, settings.confidence, own)
        table = with_intervals(table, boot.result())
    table = adjust_and_power(table, settings)
    mean = mean_over_judges(table)
    if not mean.empty:
        table = pd.concat([table, mean], ignore_index=True)
    records = to_records(order_table(table, layout, conditions, judges, probes))
    if probes:
        records += pooled_probe_records(units.flips, probes, flagged, settings.confidence)
    if inputs.leaderboard is not None:
        records += leaderboard_records(df, inputs.leaderboard, settings, conditions)
    missing = never_made(df, inputs.planned)
    done = completeness(df, inputs.planned, missing)
    readiness = assess_readiness(records, settings, complete=done.complete)
    probe_table = probe_rows(records, probes, settings)
    if inputs.longer_sides is not None:
        records += longer_win_records(df, inputs.longer_sides, confidence=settings.confidence)
    outside = list(inputs.outside_records)
    # the settled verdicts read the records the run's judgments give (the human ones are added last)
    readiness, unfinished = settled.with_stops(
        readiness, [*records, *(r for r in outside if r.metric not in HUMAN_METRICS)], settings, inputs.stops
    )
    return Analysis(
        records=[*records, *outside],
        readiness=readiness,
        unfinished_judges=unfinished,
        judges=judge_summaries(df, inputs.planned, missing),
        completeness=done,
        flagged_items=sorted(flagged),
        conditions=conditions,
        subsets=list(layout.groups),
        settings=settings,
        self_preference=_self_preference(df, inputs, conditions),
        probes=dict(probes),
        probe_rows=probe_table,
        length_rows=length_rows(df, lengths.categories, settings.confidence),
    )


def _self_preference(
    df: pd.DataFrame, inputs: AnalysisInputs, conditions: Sequence[str]
) -> SelfPreferenceReport | None:
    """The self-preference check on the run's language conditions (not its probes), when asked."""
    asked = inputs.self_preference
    if asked is None:
        return None
    settings = inputs.settings
    return self_preference(
        df,
        asked.item_models,
        asked.families,
        asked.table,
        conditions=[c for c in conditions if c not in inputs.probes],
        confidence=settings.confidence,
        seed=settings.seed,
    )
