"""Typed records shared by every stage.

Each file a user opens (variants, audit, judgments, metrics, bbe, manifest) is one of these models
serialised one per line (JSONL) or as a document; their JSON is the contract of INTERFACE.md.
"""

from __future__ import annotations

from judgebench.records.conditions import Condition, ConditionAudit
from judgebench.records.items import TEXT_FIELDS, AuditFlag, Item, Label, TranslationFailure, Variant
from judgebench.records.judgments import (
    CallKey,
    Judgment,
    Kind,
    Perturbation,
    PlannedKey,
    UnitKey,
    Usage,
    Winner,
)
from judgebench.records.metrics import Metric, MetricRecord
from judgebench.records.pairs import ConditionPair, JudgePair

__all__ = [
    "TEXT_FIELDS",
    "AuditFlag",
    "CallKey",
    "Condition",
    "ConditionAudit",
    "ConditionPair",
    "Item",
    "JudgePair",
    "Judgment",
    "Kind",
    "Label",
    "Metric",
    "MetricRecord",
    "Perturbation",
    "PlannedKey",
    "TranslationFailure",
    "UnitKey",
    "Usage",
    "Variant",
    "Winner",
]
