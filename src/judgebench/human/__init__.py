"""Human labels: agreement with the judge and among annotators, prediction-powered (PPI++)
estimates of win rates and accuracy, and the label budget (issue 30)."""

from __future__ import annotations

from judgebench.human.compute import human_report, known_pairs
from judgebench.human.human_doc import HumanReport
from judgebench.human.label_budget import (
    LabelBudget,
    assumed_budget,
    half_width_at,
    labels_needed,
    pilot_budget,
)
from judgebench.human.labels import HumanLabel, HumanLabels, human_labels, load_human_labels
from judgebench.human.ppi import MeanEstimate, classical_mean, ppi_mean
from judgebench.human.verdicts import item_verdicts, output_sources

__all__ = [
    "HumanLabel",
    "HumanLabels",
    "HumanReport",
    "LabelBudget",
    "MeanEstimate",
    "assumed_budget",
    "classical_mean",
    "half_width_at",
    "human_labels",
    "human_report",
    "item_verdicts",
    "known_pairs",
    "labels_needed",
    "load_human_labels",
    "output_sources",
    "pilot_budget",
    "ppi_mean",
]
