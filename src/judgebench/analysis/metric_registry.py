"""Every metric declared once: its family, denominator, interval, label, report section and readiness role.

Why a registry: a metric used to travel by hand through the pipeline, a section's column list, the
sensitivity and subset tables, the definitions and compare (`positional_mcnemar` took 4 files,
`rewardbench_score` 7, `probe_dependent_share` 13). Now the report's sections, its definitions,
compare's metric table and readiness's list of what it reads all read these declarations; the
names themselves stay `records.metrics.Metric` (the names metrics.json has always held).

A new metric is two files: its declaration (`register(MetricSpec(...))`, with a `compute` that
returns its rows of the record table) and that computation. `compute` receives `MetricInputs`
(the judgments, their per-unit tables and the cell layout) and returns one row per cell, as
`cells.proportion` builds them; the pipeline adds it to the record table before the bootstrap, the
p-value adjustment and the mean over judges, so it is treated like every built-in metric.
A metric whose `compute` is None is computed by its family's module (accuracy.py, flips.py, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Literal

import pandas as pd

from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.frame import Layout, UnitTables
from judgebench.errors import InputError, JudgebenchError
from judgebench.plugins import declared
from judgebench.records.metrics import SOURCE_HEADLINE_PREFIX, TIE_PROBE_PREFIX, CIMethod, Metric

# the report sections a metric may be shown in (report/report_sections.py builds them in this order)
SECTIONS: tuple[str, ...] = (
    "accuracy",
    "length",
    "leaderboard",
    "flips",
    "position",
    "comparisons",
    "answers",
    "tie_probes",
    "probes",
    "source",
    "human",
)
Role = Literal["baseline", "invariance"]  # which part of the readiness verdict reads it (PROTOCOL §4)
Per = Literal["condition", "pair"]  # measured per condition (`zh`) or per condition pair (`en->zh`)
Scale = Literal["percent", "points", "number"]  # how a table writes its value
ItemLevel = Literal["wilson", "tango"]  # its score interval on the items (small_n.py): Tango: a paired change


@dataclass(frozen=True)
class Gate:
    """A readiness check on a metric: its deciding interval (small_n.decisive) against a limit.
    `at_most`: the metric must be at or below the limit (fail when the lower bound is above it, pass
    when the upper bound is at or below it on at least `min_items` items); else above it (fail when
    the upper bound is at or below it, pass when the lower bound is above it). `limit`: a
    ReportSettings field (the user's threshold, e.g. `max_flip_rate`) or a fixed number."""

    limit: str | float
    at_most: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.limit, str) and self.limit not in ReportSettings.model_fields:
            raise InputError(f"readiness gate: {self.limit!r} is not a report setting")

    def threshold(self, settings: ReportSettings) -> float:
        """The limit under these settings."""
        return float(getattr(settings, self.limit)) if isinstance(self.limit, str) else float(self.limit)


@dataclass(frozen=True)
class MetricInputs:
    """What a registered computation reads: the judgment table (`frame.judgment_frame`), the cells
    (`Layout`: judge x condition x subset x filtered), the per-unit tables and the confidence."""

    layout: Layout
    judgments: pd.DataFrame
    units: UnitTables
    confidence: float


Computation = Callable[[MetricInputs], pd.DataFrame]


@dataclass(frozen=True)
class MetricSpec:
    """One metric, declared once. `denominator` and `label` are what the report's definitions and
    tables say; `section` the report section that shows it (None: a record only); `readiness` the
    verdict part that reads it; `title` its name in prose (default: the name, spaced); `compare`:
    listed by `judgebench compare` for each run; `sensitivity`/`by_subset`: in those tables;
    `prefix`: the name is a prefix (`tie_probe_<x>`). `gate`: the readiness check its `readiness`
    part makes (the forest plot draws the invariance gates of pair metrics against their limits);
    `items`: it gets an item-level interval (what verdicts read); `leaderboard`: its column header
    in the leaderboard table. `units` (instead of `compute`): its unit rows (judge, condition,
    item_id and the counts `k` of `n`), summed per cell into a Wilson proportion and resampled by the
    item-clustered bootstrap like the built-in ratios (`items`: with an item-level interval too)."""

    name: str
    family: str
    denominator: str
    interval: CIMethod | None
    label: str
    section: str | None = None
    readiness: Role | None = None
    per: Per = "condition"
    scale: Scale = "percent"
    compare: bool = False
    sensitivity: bool = False
    by_subset: bool = False
    prefix: bool = False
    compute: Computation | None = None
    title: str = ""
    gate: Gate | None = None
    items: ItemLevel | None = None
    leaderboard: str | None = None
    units: Computation | None = None

    @property
    def prose(self) -> str:
        """The metric's name in a sentence or a table title: `strict accuracy`."""
        return self.title or self.name.replace("_", " ")

    def __post_init__(self) -> None:
        if self.section is not None and self.section not in SECTIONS:
            raise InputError(
                f"metric {self.name!r}: unknown report section {self.section!r} "
                f"(one of {', '.join(SECTIONS)})"
            )
        if self.gate is not None and self.readiness is None:
            raise InputError(f"metric {self.name!r}: a readiness gate needs a readiness role")
        if self.compute is not None and self.units is not None:
            raise InputError(f"metric {self.name!r}: give its `compute` or its `units`, not both")


_SPECS: dict[str, MetricSpec] = {}


def register(spec: MetricSpec, *, replace: bool = False) -> MetricSpec:
    """Declare a metric; a second declaration of a name is an error unless `replace`."""
    if spec.name in _SPECS and not replace:
        raise InputError(f"metric {spec.name!r} is declared twice")
    _SPECS[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a declaration (a plugin unloaded, a test's toy metric)."""
    _SPECS.pop(name, None)


def specs() -> list[MetricSpec]:
    """Every declaration in declaration order (the order tables list their columns in)."""
    return list(_every().values())


def spec_of(metric: str) -> MetricSpec | None:
    """The declaration of a metric name: its own, else the prefix it starts with (`tie_probe_ja`)."""
    every = _every()
    found = every.get(metric)
    if found is not None:
        return found
    return next((s for s in every.values() if s.prefix and metric.startswith(s.name)), None)


def in_section(section: str) -> list[MetricSpec]:
    """The metrics a report section shows, in declaration order."""
    return [s for s in _every().values() if s.section == section and not s.prefix]


def label(metric: str) -> str:
    """A metric's label in tables (its name where it is not declared)."""
    spec = spec_of(metric)
    return spec.label if spec is not None else metric


def computed() -> Iterator[MetricSpec]:
    """The declarations that bring their own computation (not one of the built-in families)."""
    return (s for s in _every().values() if s.compute is not None)


def counted() -> Iterator[MetricSpec]:
    """The declarations that bring their unit rows (summed per cell and bootstrapped over items)."""
    return (s for s in _every().values() if s.units is not None)


def read_by(role: Role) -> list[str]:
    """The metrics a readiness part reads."""
    return [s.name for s in _every().values() if s.readiness == role]


def gated(role: Role) -> list[MetricSpec]:
    """The metrics with a readiness gate in a verdict part, in declaration order."""
    return [s for s in _every().values() if s.readiness == role and s.gate is not None]


def gate_of(metric: str) -> Gate:
    """A built-in metric's declared gate (a figure draws its limit); an undeclared one is a bug."""
    spec = spec_of(metric)
    if spec is None or spec.gate is None:
        raise JudgebenchError(f"metric {metric!r} declares no readiness gate")
    return spec.gate


def bootstrap_main() -> frozenset[str]:
    """The metrics whose only interval is the item-clustered bootstrap (paired differences, ECE)."""
    return frozenset(str(s.name) for s in _every().values() if s.interval == CIMethod.BOOTSTRAP)


def item_level(kind: ItemLevel) -> list[str]:
    """The metrics that get an item-level interval of this kind (clustered.py, small_n.py)."""
    return [str(s.name) for s in _every().values() if s.items == kind]


def on_leaderboard() -> list[MetricSpec]:
    """The metrics the leaderboard table shows beside the score, in declaration order."""
    return [s for s in _every().values() if s.leaderboard is not None]


PLUGIN_GROUP = "judgebench.metrics"


@cache
def _plugins() -> dict[str, MetricSpec]:
    """The metrics other packages declare in the entry-point group `judgebench.metrics` (read once):
    each names a `MetricSpec`; a name clash or another object is an error naming the entry point."""
    return declared(PLUGIN_GROUP, MetricSpec, lambda spec: spec.name, _SPECS, "metric")


def _every() -> dict[str, MetricSpec]:
    """Every declaration: those registered here (in declaration order), then the plugins'."""
    plugins = _plugins()
    return {**_SPECS, **plugins} if plugins else _SPECS


def _declare(*declared: MetricSpec) -> None:
    for spec in declared:
        register(spec)


# the main interval with the report's bootstrap on (paired differences and ECE: Wald without it)
_W, _N, _WALD, _BOOT, _T = CIMethod.WILSON, CIMethod.NORMAL, CIMethod.WALD, CIMethod.BOOTSTRAP, CIMethod.T
ANSWERED = "answered pair judgments with a label (an invalid answer is wrong)"
VALID_PAIRS = "(item, order) pairs whose two verdicts are valid"
VALID_ITEMS = "items whose two orders' verdicts are valid"
LENGTH = "answered labelled judgments whose outputs' lengths are known"
VALID_PROBES = "valid tie-probe verdicts"

_declare(
    MetricSpec(Metric.STRICT_ACCURACY, "accuracy", ANSWERED, _W, "Strict %", "accuracy", "baseline",
               compare=True, sensitivity=True, by_subset=True, title="strict accuracy",
               gate=Gate("chance", at_most=False), items="wilson"),
    MetricSpec(Metric.TIE_HALF_ACCURACY, "accuracy", ANSWERED + "; a tie scores 0.5", _N, "Tie-half %",
               "accuracy", compare=True, sensitivity=True, by_subset=True, title="tie-half accuracy",
               items="wilson"),
    MetricSpec(Metric.POSITION_A_RATE, "answers", "valid pair judgments", _W, "Raw A %", "answers",
               "baseline", compare=True),
    MetricSpec(Metric.TIE_RATE, "answers", "valid pair judgments", _W, "Tie %", "answers", "baseline",
               compare=True),
    MetricSpec(Metric.INVALID_RATE, "answers", "answered pair judgments", _W, "Invalid %", "answers",
               "baseline", compare=True),
    MetricSpec(Metric.MISSING_RATE, "answers", "planned pair judgments", _W, "Missing %", "answers",
               "baseline"),
    MetricSpec(Metric.LONGER_WIN_RATE, "answers", "valid non-tie verdicts on items of unequal length", _W,
               "Longer wins %", "answers"),
    MetricSpec(Metric.MEAN_CONFIDENCE, "calibration", "judgments stating a confidence", _N,
               "Mean confidence", "answers", scale="number"),
    MetricSpec(Metric.BRIER, "calibration", "judgments stating a confidence", _N, "Brier", "answers",
               scale="number"),
    MetricSpec(Metric.ECE, "calibration", "judgments stating a confidence (10 bins)", _BOOT, "ECE", "answers",
               scale="number"),
    MetricSpec(Metric.FLIP_RATE, "flips", VALID_PAIRS, _W, "Flip %", "flips", "invariance", per="pair",
               compare=True, sensitivity=True, by_subset=True, gate=Gate("max_flip_rate"), items="wilson",
               leaderboard="Flip en->c %"),
    MetricSpec(Metric.GOLD_FLIP_RATE, "flips", VALID_PAIRS + " with a label", _W, "Gold flip %", "flips",
               per="pair", sensitivity=True, title="gold flip rate"),
    MetricSpec(Metric.FLIP_REVERSAL_RATE, "flips", VALID_PAIRS, _W, "Reversal %", "flips", per="pair"),
    MetricSpec(Metric.FLIP_TO_TIE_RATE, "flips", VALID_PAIRS, _W, "To tie %", "flips", per="pair"),
    MetricSpec(Metric.FLIP_FROM_TIE_RATE, "flips", VALID_PAIRS, _W, "From tie %", "flips", per="pair"),
    MetricSpec(Metric.MCNEMAR, "flips", VALID_PAIRS + " with a label (b - c, a count)", None, "McNemar",
               "flips", per="pair", scale="number"),
    MetricSpec(Metric.POSITION_INCONSISTENCY, "position", VALID_ITEMS, _W, "Inconsistent %", "position",
               "baseline", compare=True, sensitivity=True, by_subset=True,
               gate=Gate("max_position_inconsistency"), items="wilson", leaderboard="Pos. incons. %"),
    MetricSpec(Metric.POSITION_INCONSISTENCY_INCREASE, "position", VALID_ITEMS + " in both conditions", _BOOT,
               "Increase (pts)", "position", "invariance", per="pair", scale="points",
               gate=Gate("max_position_increase"), items="tango", title="position-inconsistency increase"),
    MetricSpec(Metric.POSITIONAL_MCNEMAR, "position", VALID_ITEMS + " (A won in both orders vs B)", _WALD,
               "Positional McNemar", scale="number"),
    MetricSpec(Metric.LENGTH_BASELINE_SHORTER_CHARS, "length", LENGTH, _W, "Shorter (chars) %", "length"),
    MetricSpec(Metric.LENGTH_BASELINE_LONGER_CHARS, "length", LENGTH, _W, "Longer (chars) %", "length"),
    MetricSpec(Metric.LENGTH_BASELINE_SHORTER_TOKENS, "length", LENGTH, _W, "Shorter (tokens) %", "length"),
    MetricSpec(Metric.LENGTH_BASELINE_LONGER_TOKENS, "length", LENGTH, _W, "Longer (tokens) %", "length"),
    MetricSpec(Metric.ACCURACY_GOLD_SHORTER, "length", LENGTH + ", gold the shorter", _W, "Gold shorter %",
               "length", "baseline", gate=Gate("chance", at_most=False)),
    MetricSpec(Metric.ACCURACY_GOLD_LONGER, "length", LENGTH + ", gold the longer", _W, "Gold longer %",
               "length", "baseline", gate=Gate("chance", at_most=False)),
    MetricSpec(Metric.ACCURACY_OVER_LENGTH_BASELINE, "length", LENGTH, _WALD, "Over the length rule (pts)",
               "length", scale="points"),
    MetricSpec(TIE_PROBE_PREFIX, "tie_probes", VALID_PROBES, _W, "Target %", "tie_probes", prefix=True),
    MetricSpec(Metric.TIE_PROBE_EN, "tie_probes", VALID_PROBES, _W, "EN %", "tie_probes"),
    MetricSpec(Metric.TIE_PROBE_ZH, "tie_probes", VALID_PROBES, _W, "Target %", "tie_probes"),
    MetricSpec(Metric.TIE_PROBE_TIE, "tie_probes", VALID_PROBES, _W, "Tie %", "tie_probes", sensitivity=True,
               title="tie-probe tie share"),
    MetricSpec(Metric.TIE_PROBE_INVALID_RATE, "tie_probes", "answered tie-probes", _W, "Invalid %",
               "tie_probes"),
    MetricSpec(Metric.TIE_PROBE_EN_SHARE, "tie_probes", "valid non-tie tie-probe verdicts", _W,
               "EN of non-ties %", "tie_probes", sensitivity=True, title="tie-probe EN of non-ties"),
    MetricSpec(Metric.REWARDBENCH_SCORE, "leaderboard", ANSWERED + ", weighted by the subsets' sizes", _BOOT,
               "RewardBench score %", "leaderboard"),
    MetricSpec(Metric.REWARDBENCH_SCORE_DROP, "leaderboard", "the items both conditions hold", _BOOT,
               "Drop (pts)", "leaderboard", per="pair", scale="points"),
    MetricSpec(Metric.PROBE_FLIP_RATE, "probes", VALID_PAIRS + " pooled over the probe's instances", _W,
               "Pooled flip %", "probes", per="pair"),
    MetricSpec(Metric.PROBE_DEPENDENT_SHARE, "probes", "items judged under every instance and the base", _W,
               "Instance-dependent %", "probes", per="pair"),
    MetricSpec(Metric.FLIP_RATE_DIFF, "comparisons", "units both judges answered validly", _BOOT,
               "Flip rate diff (pts)", "comparisons", per="pair", scale="points", title="flip rate"),
    MetricSpec(Metric.POSITION_INCONSISTENCY_DIFF, "comparisons", "units both judges answered validly", _BOOT,
               "Position inconsistency diff (pts)", "comparisons", scale="points",
               title="position inconsistency"),
    MetricSpec(Metric.HUMAN_AGREEMENT, "human", "items with a human majority label", _W, "Agreement %",
               "human"),
    MetricSpec(Metric.COHENS_KAPPA, "human", "items with a human majority label", _BOOT, "Cohen's kappa",
               "human", scale="number"),
    MetricSpec(Metric.KRIPPENDORFF_ALPHA, "human", "items with two or more labels", _BOOT,
               "Krippendorff's alpha", "human", scale="number"),
    MetricSpec(Metric.ANNOTATOR_AGREEMENT, "human", "pairs of labels of one item", _W, "Annotators %",
               "human"),
    MetricSpec(Metric.PPI_WIN_RATE, "human", "labelled and judge-only items", _T, "PPI win rate %", "human"),
    MetricSpec(Metric.CLASSICAL_WIN_RATE, "human", "labelled items", _W, "Classical win rate %", "human"),
    MetricSpec(Metric.PPI_ACCURACY, "human", "labelled and judge-only items", _T, "PPI accuracy %", "human"),
    MetricSpec(Metric.CLASSICAL_ACCURACY, "human", "labelled items", _W, "Classical accuracy %", "human"),
    MetricSpec(SOURCE_HEADLINE_PREFIX, "source", "the source's own convention", None, "Source headline",
               "source", scale="number", prefix=True),
)  # fmt: skip
