"""Each stage takes one typed request: built by the CLI from its flags, or by a library user.

`api.judge(run, JudgeRequest(models=[...]))`: the request model forbids unknown fields, so a misspelt
option is an error, not a no-op. `build_request` is how the CLI builds one from its flags: a field
that does not validate becomes a ConfigError naming the flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from judgebench.errors import ConfigError

R = TypeVar("R", bound=BaseModel)


def build_request(
    model: type[R], request: R | None, fields: dict[str, Any], *, flags: Mapping[str, str] | None = None
) -> R:
    """`request` updated by `fields` (or a new request from them), validated; an error names the
    field, or the command-line flag `flags` gives for it."""
    if request is not None and not fields:
        return request
    data = {**(request.model_dump() if request is not None else {}), **fields}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        where = (flags or {}).get(where, where)
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{where}: {message}" if where else message) from None
