"""The fast readers' views of `Judgment` are derived from the model: today's equal the tables once
written by hand, and a field added to the model shows up in both (issue 42)."""

from __future__ import annotations

from typing import Any, Literal

import pyarrow as pa
import pytest
from pydantic import BaseModel, Field

from judgebench.records import Judgment
from judgebench.store import answers_log as answers
from judgebench.store import judgment_table
from judgebench.store.judgment_schema import (
    arrow_schema,
    closed_values,
    json_types,
    nested_checks,
    required_fields,
)

_NONE = type(None)
_STR, _F64, _I64 = pa.string(), pa.float64(), pa.int64()
_REQ = ("judge", "item_id", "subset", "kind", "condition", "order")

# the tables as they were written by hand (answers._TYPES and judgment_table._SCHEMA before issue 42)
OLD_TYPES: dict[str, frozenset[type]] = {
    **dict.fromkeys(_REQ, frozenset({str})),
    **dict.fromkeys(
        ("raw", "winner", "verdict", "parse_error", "error", "reason", "model"), frozenset({str, _NONE})
    ),
    **dict.fromkeys(("cache_key", "prompt_hash", "template", "finish_reason"), frozenset({str, _NONE})),
    **dict.fromkeys(("batch_id", "custom_id", "created_at"), frozenset({str, _NONE})),
    **dict.fromkeys(
        ("confidence", "prob_a", "prob_b", "prob_tie", "cost_usd", "latency_s"),
        frozenset({float, int, _NONE}),
    ),
    **dict.fromkeys(("label", "raw_chars", "raw_cap"), frozenset({int, _NONE})),
    "reask": frozenset({int}),
    "from_cache": frozenset({bool, _NONE}),
    "params": frozenset({dict}),
    "usage": frozenset({dict, _NONE}),
    "perturbation": frozenset({dict, _NONE}),
}
OLD_SCHEMA = pa.schema(
    [
        *((name, _STR) for name in _REQ),
        *((name, _STR) for name in ("raw", "winner", "verdict", "parse_error", "error", "reason")),
        ("label", _I64),
        *((name, _F64) for name in ("confidence", "prob_a", "prob_b", "prob_tie", "cost_usd", "latency_s")),
        *((name, _STR) for name in ("model", "cache_key", "prompt_hash", "template", "finish_reason")),
        ("usage", pa.struct([("input_tokens", _I64), ("output_tokens", _I64)])),
        ("from_cache", pa.bool_()),
        ("reask", _I64),
        ("raw_chars", _I64),
        ("raw_cap", _I64),
        *((name, _STR) for name in ("batch_id", "custom_id", "created_at")),
        ("perturbation", pa.struct([("field", _STR), ("operation", _STR)])),
    ]
)


def _fields(schema: pa.Schema) -> dict[str, pa.DataType]:
    return {f.name: f.type for f in schema}


def test_todays_judgment_gives_the_tables_once_written_by_hand() -> None:
    assert json_types(Judgment) == OLD_TYPES
    assert _fields(arrow_schema(Judgment)) == _fields(OLD_SCHEMA)
    assert required_fields(Judgment) == _REQ
    assert closed_values(Judgment) == {
        "kind": {"pair", "tie_probe"},
        "winner": {"A", "B", "Tie", "invalid", None},
        "label": {1, 2, None},
    }
    usage, perturbation = nested_checks(Judgment)
    assert usage == (
        "usage",
        (("input_tokens", frozenset({int}), False), ("output_tokens", frozenset({int}), False)),
    )
    assert perturbation == (
        "perturbation",
        (("field", frozenset({str}), True), ("operation", frozenset({str}), True)),
    )
    # and the readers use them
    assert answers._TYPES == OLD_TYPES and answers._REQUIRED == _REQ
    assert _fields(judgment_table._SCHEMA) == _fields(OLD_SCHEMA)


class _Span(BaseModel):
    start: int
    end: int | None = None


class _Newer(Judgment):
    """A release that adds fields: a score, a stance of closed values, a nested span, free notes."""

    score: float | None = None
    stance: Literal["for", "against"] | None = None
    span: _Span | None = None
    notes: dict[str, Any] = Field(default_factory=dict)


def test_a_field_added_to_the_model_shows_up_in_both_derived_schemas() -> None:
    types, schema = json_types(_Newer), _fields(arrow_schema(_Newer))
    assert types == OLD_TYPES | {
        "score": frozenset({float, int, _NONE}),
        "stance": frozenset({str, _NONE}),
        "span": frozenset({dict, _NONE}),
        "notes": frozenset({dict}),
    }
    assert schema == _fields(OLD_SCHEMA) | {
        "score": _F64,
        "stance": _STR,
        "span": pa.struct([("start", _I64), ("end", _I64)]),
    }  # notes, free-form, is the exact reader's (as params is)
    assert closed_values(_Newer)["stance"] == {"for", "against", None}
    assert (
        "span",
        (("start", frozenset({int}), True), ("end", frozenset({int, _NONE}), False)),
    ) in nested_checks(_Newer)


class _Odd(BaseModel):
    both: int | str


def test_an_annotation_without_a_mapping_is_refused_not_guessed() -> None:
    with pytest.raises(TypeError, match="no fast-reader mapping"):
        json_types(_Odd)
