"""The numbers a user sets (flags, `api` request fields, judges.toml values), typed once: finite and
in range, or refused when the request or setting is built, before anything runs.

`float("nan")` compares false with everything, so a range check alone lets it through (`--max-cost
nan` was no cap at all) and `inf` passes every lower bound; every user-set model therefore also takes
`USER_NUMBERS` (pydantic's `allow_inf_nan=False`) as its config.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

__all__ = ["USER_NUMBERS", "NonNegative", "Positive", "Share", "Temperature", "non_negative_problem"]

# the model config of every user-set request or setting: no NaN, no infinity, no unknown field
USER_NUMBERS = ConfigDict(extra="forbid", allow_inf_nan=False)

Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# a rate or share, 0 to 1
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Temperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]


_NON_NEGATIVE = TypeAdapter(NonNegative)


def non_negative_problem(value: float) -> str | None:
    """What is wrong with `value` as a `NonNegative` outside a model (a dataclass field), or None."""
    try:
        _NON_NEGATIVE.validate_python(value)
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"])
    return None
