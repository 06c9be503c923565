"""What `judgebench compare` finds, as records: compare.json is a `CompareDoc`, one line of
compare_changed.jsonl a `ChangedUnit`.

A unit is one planned call of a judge: (item, kind, condition, order). Two runs are compared unit by
unit, each unit's verdict in run A against its verdict in run B, for each matched pair of judges.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# 2: `mcnemar_p` is the item-clustered test (the unit-level one moved to `mcnemar_p_units`); datasets
COMPARE_SCHEMA_VERSION = 2
ALL_CONDITIONS = "all"  # the row that pools a judge pair's conditions (pairs only)

MatchHow = Literal["same name", "one judge each", "named"]
GateStatus = Literal["pass", "fail", "within noise", "no evidence"]
Kind = Literal["pair", "tie_probe"]


class JudgeMatch(BaseModel):
    """Which judge of run A is compared with which of run B, and why these two."""

    judge_a: str
    judge_b: str
    how: MatchHow

    @property
    def label(self) -> str:
        return self.judge_a if self.judge_a == self.judge_b else f"{self.judge_a} -> {self.judge_b}"


class Coverage(BaseModel):
    """Units and items of one judge pair found in one run only (counted, never silently dropped)."""

    judge_a: str
    judge_b: str
    units_a: int
    units_b: int
    units_only_a: int
    units_only_b: int
    items_only_a: list[str] = Field(default_factory=list)  # the first LISTED_ITEMS ids, sorted
    items_only_b: list[str] = Field(default_factory=list)
    items_only_a_total: int = 0  # every one, counted
    items_only_b_total: int = 0
    conditions_only_a: list[str] = Field(default_factory=list)
    conditions_only_b: list[str] = Field(default_factory=list)


class Drift(BaseModel):
    """One judge pair, kind and condition (or `all` conditions): how many verdicts changed between the
    runs, with an interval, and whether correctness changed (exact McNemar) where gold labels exist.

    `flip_rate` is the share of compared units whose verdict differs (invalid counts as a verdict: a
    judge that starts answering unreadably has changed); a unit with no verdict in either run (a call
    that failed) is `missing`, not compared. The interval is Wilson's at the item-clustered effective
    size (`design_effect`: the two orders of an item are not independent)."""

    judge_a: str
    judge_b: str
    kind: Kind
    condition: str
    units: int  # units in both runs
    missing: int  # of those, units without a verdict in one run or both
    compared: int
    items: int  # distinct items compared
    changed: int
    flip_rate: float | None
    flip_low: float | None
    flip_high: float | None
    design_effect: float | None
    transitions: dict[str, int] = Field(default_factory=dict)  # "1->2": units, changed ones only
    shares_a: dict[str, float] = Field(default_factory=dict)  # verdict -> share of compared units
    shares_b: dict[str, float] = Field(default_factory=dict)
    position_a_a: float | None = None  # share answered "A" (the first position), pairs only
    position_a_b: float | None = None
    gold: int = 0  # compared units with a gold label
    accuracy_a: float | None = None  # strict: the gold verdict (tie and invalid are wrong)
    accuracy_b: float | None = None
    right_to_wrong: int = 0  # McNemar's b: right in run A, wrong in run B
    wrong_to_right: int = 0  # c
    discordant_items: int = 0  # items whose right -> wrong and wrong -> right counts differ
    # the gate's test: item-clustered (exact sign flips of each item's b_i - c_i; drift.clustered_mcnemar)
    mcnemar_p: float | None = None
    mcnemar_p_adjusted: float | None = None  # Benjamini-Hochberg over the gated rows
    # the unit-level exact McNemar (statsmodels), for reference only: it takes an item's units for
    # independent pairs and rejects far more often than its level when items change as a whole
    mcnemar_p_units: float | None = None
    gate_flip: GateStatus | None = None
    gate_mcnemar: GateStatus | None = None


class MetricChange(BaseModel):
    """A declared metric (compare=True) of one matched judge pair and condition in each run: its
    value in run A, in run B, and B minus A (`compare.metric_changes`)."""

    judge_a: str
    judge_b: str
    metric: str
    condition: str
    value_a: float | None
    value_b: float | None
    n_a: int | None
    n_b: int | None
    change: float | None


class GateSettings(BaseModel):
    """The CI gate: fail when a flip rate is above `flip_rate` with confidence (its interval's lower
    bound is above it), or when a McNemar test rejects at `mcnemar_alpha` after adjustment."""

    flip_rate: float | None = None
    mcnemar_alpha: float | None = None
    bound: Literal["lower"] = "lower"


class ChangedUnit(BaseModel):
    """One unit whose verdict changed between the runs (a line of compare_changed.jsonl)."""

    item_id: str
    subset: str
    judge_a: str
    judge_b: str
    kind: str
    condition: str
    order: str
    verdict_a: str | None
    verdict_b: str | None
    winner_a: str | None
    winner_b: str | None
    gold: int | None
    correct_a: bool | None
    correct_b: bool | None
    raw_a: str | None = None
    raw_b: str | None = None
    # the item in each run's report.html explorer, relative to the output folder (None: no report)
    explorer_a: str | None = None
    explorer_b: str | None = None


class DatasetRef(BaseModel):
    """The dataset a run's manifest records (None where it records none: a folder with a bare
    judgments.jsonl, or an older run)."""

    spec: str | None = None
    checksum: str | None = None


class CompareDoc(BaseModel):
    """compare.json: the two runs, how their judges were matched, what each run holds that the other
    lacks, the drift rows, the gate and its outcome."""

    schema_version: int = COMPARE_SCHEMA_VERSION
    judgebench_version: str
    generated_at: str
    run_a: str
    run_b: str
    confidence: float
    matches: list[JudgeMatch]
    items_a: int
    items_b: int
    items_common: int
    conditions_a: list[str]
    conditions_b: list[str]
    coverage: list[Coverage]
    dataset_a: DatasetRef = Field(default_factory=DatasetRef)
    dataset_b: DatasetRef = Field(default_factory=DatasetRef)
    # the manifests record different datasets and --allow-different-datasets compared them anyway
    different_datasets: bool = False
    drift: list[Drift]
    # each declared compare metric in both runs (subset all, unfiltered)
    metrics: list[MetricChange] = Field(default_factory=list)
    changed: int
    changed_file: str
    gate: GateSettings
    gate_failed: bool
    gate_reasons: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
