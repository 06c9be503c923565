"""Human labels against a run: `report --human FILE`'s section and `plan --human-labels`'s budget.

The labels file is validated against the run's judged (item, condition) pairs before anything is
written; the sources of a win rate come from the run's items (the models their metadata names).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, Field, model_validator

from judgebench.analysis import ReportSettings
from judgebench.api.datasets import pick_items, run_folder
from judgebench.conditions import SOURCE
from judgebench.data.dataset import load_dataset
from judgebench.errors import ConfigError, RunDirError
from judgebench.human import (
    HumanLabels,
    HumanReport,
    LabelBudget,
    assumed_budget,
    human_report,
    item_verdicts,
    known_pairs,
    load_human_labels,
    output_sources,
    pilot_budget,
)
from judgebench.records import Item
from judgebench.records.numbers import USER_NUMBERS
from judgebench.records.selective_document import SelectiveBudget
from judgebench.store.judgment_table import read_judgment_table
from judgebench.store.run_folder import JUDGMENTS, RunDir


def run_human_labels(frame: pd.DataFrame, path: str | Path) -> HumanLabels:
    """The labels of `path`, every row checked against the judged pairs of `frame` (an analysis
    frame): an unknown item or condition is an error naming the file and line."""
    return load_human_labels(path, known=known_pairs(frame))


def human_for_run(
    frame: pd.DataFrame,
    labels: HumanLabels,
    settings: ReportSettings,
    *,
    items: Sequence[Item] = (),
    order: Sequence[str] = (),
) -> HumanReport:
    """The human section of a run: `items` (the run's, when they could be read) name the sources."""
    sources = {i.id: named for i in items if (named := output_sources(i.metadata, i.label)) is not None}
    return human_report(
        frame,
        labels,
        sources=sources,
        confidence=settings.confidence,
        bootstrap=settings.bootstrap_samples,
        seed=settings.seed,
        order=[SOURCE, *order],
    )


def _frame(run: RunDir) -> pd.DataFrame:
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise RunDirError(f"{path} does not exist: run `judgebench judge --run {run.path}` first")
    return read_judgment_table(path).analysis_frame()


class HumanBudgetRequest(BaseModel):
    """`plan --human-labels`: the half-width wanted on the win rate, and either a pilot (a run and
    its human labels) or a stated judge-human agreement per condition."""

    model_config = USER_NUMBERS

    half_width: float = Field(default=0.05, gt=0.0, lt=0.5)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    run: Path | None = None  # the pilot run (its judgments; with `human`, its agreement)
    human: Path | None = None  # the pilot's human labels
    # condition -> the judge's assumed agreement with humans (used when there is no pilot)
    agreement: dict[str, float] = Field(default_factory=dict)
    items: int | None = Field(default=None, ge=1)  # judged items per condition, with no run
    # with no run: the study's dataset (after --subset / --limit) says how many items are judged
    dataset: str | None = None
    data_dir: str | None = None
    subset: str | None = None
    limit: int | None = Field(default=None, ge=1)
    # selective judging (PROTOCOL §8): labels for a guaranteed agreement of 1 - alpha at a coverage
    selective_alpha: float | None = Field(default=None, gt=0.0, lt=1.0)
    selective_delta: float = Field(default=0.1, gt=0.0, lt=1.0)
    coverage: float = Field(default=0.7, gt=0.0, le=1.0)
    kept_error: float | None = Field(default=None, ge=0.0, lt=1.0)  # assumed, with no pilot

    @model_validator(mode="after")
    def _one_basis(self) -> HumanBudgetRequest:
        if self.human is not None and self.run is None:
            raise ConfigError("--human FILE needs --run RUN: the pilot's judgments")
        selective_assumed = self.selective_alpha is not None and self.kept_error is not None
        if self.human is None and not self.agreement and not selective_assumed:
            raise ConfigError(
                "give a pilot (--run RUN --human FILE), --assume-agreement A, or with --selective-alpha "
                "--assume-kept-error E"
            )
        if self.selective_alpha is not None and self.human is None and self.kept_error is None:
            raise ConfigError(
                "--selective-alpha needs a pilot (--run RUN --human FILE) or --assume-kept-error E"
            )
        for condition, a in self.agreement.items():
            if not 0.0 <= a <= 1.0:
                raise ConfigError(f"--assume-agreement {condition}={a:g}: an agreement is between 0 and 1")
        return self


def agreement_flag(text: str, conditions: Sequence[str]) -> dict[str, float]:
    """`--assume-agreement`: one share for every condition (`0.8`), or per condition
    (`en=0.9,zh=0.6`: those conditions only)."""
    try:
        if "=" not in text:
            share = float(text)
            return dict.fromkeys(conditions, share)
        out = {}
        for part in text.split(","):
            name, _, value = part.partition("=")
            out[name.strip()] = float(value)
        return out
    except ValueError:
        raise ConfigError(f"--assume-agreement {text}: give a share (0.8) or CONDITION=SHARE,...") from None


class HumanBudgetResult(BaseModel):
    half_width: float
    confidence: float
    rows: list[LabelBudget]
    assumptions: list[str]
    selective: list[SelectiveBudget] = Field(default_factory=list)  # with --selective-alpha


def plan_human_labels(request: HumanBudgetRequest) -> HumanBudgetResult:
    """How many human labels per condition for a +-half_width interval on the win rate, with the
    judge's verdicts (PPI++) and without (none with only selective judging's basis: api.plan_labels
    adds its rows); makes no call."""
    if request.human is None and not request.agreement:  # selective judging's plan alone
        return HumanBudgetResult(
            half_width=request.half_width, confidence=request.confidence, rows=[], assumptions=[]
        )
    return _win_rate_budget(request)


def _win_rate_budget(request: HumanBudgetRequest) -> HumanBudgetResult:
    req = request
    z_note = f"{100 * req.confidence:g}% normal intervals, the power-tuned PPI++ variance (README)"
    if req.human is not None and req.run is not None:
        run = run_folder(req.run)
        frame = _frame(run)
        labels = run_human_labels(frame, req.human)
        translated = run.manifest().stages.translate
        order = [SOURCE, *(translated.condition_names() if translated else [])]
        verdicts = item_verdicts(frame)
        rows = pilot_budget(verdicts, labels, req.half_width, req.confidence, order, items=req.items)
        basis = [
            f"pilot: the labelled items of {req.run} ({len(labels.labels)} labels in {req.human}) give each "
            "condition's variance of the human win score and its correlation with the judge's"
            + ("" if req.items is None else f", for a study of {req.items:,} items per condition")
            + "; a small pilot's correlation is itself uncertain: label a little more than the table says"
        ]
        return HumanBudgetResult(
            half_width=req.half_width, confidence=req.confidence, rows=rows, assumptions=[*basis, z_note]
        )
    items: dict[str, int | None] = dict.fromkeys(req.agreement, req.items)
    if req.run is None and req.items is None and req.dataset is not None:
        ds = load_dataset(req.dataset, data_dir=req.data_dir)
        items = dict.fromkeys(req.agreement, len(pick_items(ds.items, req.subset, req.limit, ds.spec)))
    if req.run is not None:
        frame = _frame(run_folder(req.run))
        pairs = frame[frame["kind"] == "pair"]
        counts = pairs.groupby("condition")["item_id"].nunique()
        items = {c: int(counts[c]) if c in counts.index else req.items for c in req.agreement}
    rows = assumed_budget(req.agreement, req.half_width, req.confidence, items)
    return HumanBudgetResult(
        half_width=req.half_width,
        confidence=req.confidence,
        rows=rows,
        assumptions=[
            "assumed: the judge's item verdict equals the human label with the stated probability whatever "
            "the label, and the win rate is 1/2 (the widest case): correlation 2a - 1",
            z_note,
        ],
    )
