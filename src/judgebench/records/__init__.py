"""Typed records shared by every stage.

Each file a user opens (variants, audit, judgments, metrics, bbe, manifest) is one of these models
serialised one per line (JSONL) or as a document; their JSON is the contract of INTERFACE.md.

The names below load with the module that defines them, on first use (PEP 562): importing one
light submodule (`records.sanitize`, which the CLI's consoles need for `judgebench --help`) must not
build every pydantic model. `from judgebench.records import Judgment` works as before.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgebench.records.condition_specs import Condition, ConditionAudit
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

# each public name and the submodule that defines it
_HOME = {
    "Condition": "condition_specs",
    "ConditionAudit": "condition_specs",
    "TEXT_FIELDS": "items",
    "AuditFlag": "items",
    "Item": "items",
    "Label": "items",
    "TranslationFailure": "items",
    "Variant": "items",
    "CallKey": "judgments",
    "Judgment": "judgments",
    "Kind": "judgments",
    "Perturbation": "judgments",
    "PlannedKey": "judgments",
    "UnitKey": "judgments",
    "Usage": "judgments",
    "Winner": "judgments",
    "Metric": "metrics",
    "MetricRecord": "metrics",
    "ConditionPair": "pairs",
    "JudgePair": "pairs",
}

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


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
