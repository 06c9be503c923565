"""The fast readers' views of a record model, derived from its pydantic fields (the one declaration).

Why: judgments.jsonl has two fast readers besides the model itself: `answers` checks each line's
JSON types in Python, and `judgment_table` has pyarrow parse the file with an explicit schema. Each
needs to know, field by field, what the model takes unchanged; written out by hand three times, a
field added to `Judgment` and forgotten in one of them was read wrong or not at all. Here both are
derived from the model's annotations, so adding a field to the model is adding it everywhere.

The mapping from a pydantic annotation to what a fast reader accepts (anything else is refused
here, loudly, rather than guessed):

    annotation          JSON types taken unchanged      Arrow type
    str                 str                             string
    int                 int (not bool)                  int64
    float               float, int (pydantic's float)   float64
    bool                bool                            bool
    Literal[...]        the literal values' types       string (str values) / int64 (int values)
    a BaseModel         dict (its fields checked too)   struct of its fields, derived the same way
    dict[...]           dict                            (none: a free-form object is left out of
                                                         the Arrow schema; the exact reader reads it)
    X | None            X's, and None                   X's (Arrow columns are nullable)
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

if TYPE_CHECKING:  # pyarrow is imported only by the columnar reader that asks for an Arrow schema
    import pyarrow as pa

_NONE: type = type(None)
# the plain scalar annotations: the JSON types pydantic takes unchanged (in strict-enough sense: the
# value comes out equal and of the annotated type) and the Arrow type the columnar reader parses into
_SCALARS: dict[type, tuple[frozenset[type], str]] = {
    str: (frozenset({str}), "string"),
    int: (frozenset({int}), "int64"),
    float: (frozenset({float, int}), "float64"),  # an int becomes its float
    bool: (frozenset({bool}), "bool_"),
}


@dataclass(frozen=True)
class FieldShape:
    """What a fast reader needs of one field: the JSON types it takes unchanged, whether it must be
    present, its closed values (a Literal: None otherwise), and the nested model it holds if any."""

    types: frozenset[type]
    required: bool
    values: frozenset[Any] | None = None
    nested: type[BaseModel] | None = None
    free_form: bool = False  # a dict of anything: no Arrow column
    arrow: str = ""  # the pyarrow type factory of a scalar or literal field (`string`, `int64`, ...)


def _split_optional(annotation: Any) -> tuple[Any, bool]:
    """`X | None` -> (X, True); anything else -> (itself, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not _NONE]
        if len(args) != 1:
            raise TypeError(f"no fast-reader mapping for the union {annotation!r}")
        return args[0], len(args) < len(get_args(annotation))
    return annotation, False


def _shape(annotation: Any, required: bool) -> FieldShape:
    inner, optional = _split_optional(annotation)
    none = frozenset({_NONE}) if optional else frozenset()
    origin = get_origin(inner)
    if origin is Literal:
        values = frozenset(get_args(inner))
        kinds = frozenset(type(v) for v in values)
        if not kinds <= {str, int} or len(kinds) != 1:
            raise TypeError(f"no fast-reader mapping for {inner!r}: literals of one type, str or int")
        closed = values | ({None} if optional else set())
        return FieldShape(kinds | none, required, closed, arrow=_SCALARS[next(iter(kinds))][1])
    if origin is dict or inner is dict:
        return FieldShape(frozenset({dict}) | none, required, free_form=True)
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return FieldShape(frozenset({dict}) | none, required, nested=inner)
    if inner in _SCALARS:
        json_kinds, arrow = _SCALARS[inner]
        return FieldShape(json_kinds | none, required, arrow=arrow)
    raise TypeError(f"no fast-reader mapping for the annotation {annotation!r}")


def field_shapes(model: type[BaseModel]) -> dict[str, FieldShape]:
    """Each field of `model`, in declaration order, as a fast reader sees it."""
    hints = typing.get_type_hints(model)
    return {name: _shape(hints[name], info.is_required()) for name, info in model.model_fields.items()}


def json_types(model: type[BaseModel]) -> dict[str, frozenset[type]]:
    """Each field and the JSON types (`type()` of the decoded value) the model takes unchanged."""
    return {name: shape.types for name, shape in field_shapes(model).items()}


def required_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, shape in field_shapes(model).items() if shape.required)


def closed_values(model: type[BaseModel]) -> dict[str, frozenset[Any]]:
    """The fields of a Literal annotation and the values they take (None among them when optional)."""
    return {name: shape.values for name, shape in field_shapes(model).items() if shape.values is not None}


NestedCheck = tuple[str, tuple[tuple[str, frozenset[type], bool], ...]]


def nested_checks(model: type[BaseModel]) -> tuple[NestedCheck, ...]:
    """For each field holding a model: its name and, per field of that model, (name, JSON types taken
    unchanged, required): what a line's nested object must hold for the model to take it as it is."""
    out: list[NestedCheck] = []
    for name, shape in field_shapes(model).items():
        if shape.nested is not None:
            inner = field_shapes(shape.nested)
            if any(s.nested is not None or s.free_form or s.values is not None for s in inner.values()):
                raise TypeError(f"{shape.nested.__name__}: a nested model of plain scalars only")
            out.append((name, tuple((n, s.types, s.required) for n, s in inner.items())))
    return tuple(out)


def _arrow_type(shape: FieldShape) -> pa.DataType:
    import pyarrow as pa

    if shape.nested is not None:
        return pa.struct(list(arrow_schema(shape.nested)))
    factory: Any = getattr(pa, shape.arrow)
    data_type: pa.DataType = factory()
    return data_type


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The Arrow schema pyarrow's JSON reader parses `model`'s lines with: every typed field (a
    free-form dict is left to the exact reader), nested models as structs."""
    import pyarrow as pa

    shapes = field_shapes(model)
    return pa.schema([(name, _arrow_type(shape)) for name, shape in shapes.items() if not shape.free_form])
