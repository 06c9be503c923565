"""Help-text placeholders a user can read (`--run DIR`, `--limit N`), not Python types (`<str>`,
`<int range> [x>=1]`, `<bool>` on an on/off flag), and one way of writing defaults."""

from __future__ import annotations

from typing import Any

import typer.core

# placeholders by option name (INTERFACE.md's spelling); the rest by type below
_BY_NAME = {
    "run": "DIR",
    "data_dir": "DIR",
    "out": "PATH",
    "model": "MODEL",
    "translator": "MODEL",
    "judge": "MODEL",
    "calibrate_from": "DIR",
    "dataset": "SPEC",
    "timeout": "SECONDS",
    "poll_interval": "SECONDS",
    "max_cost": "USD",
    "template": "FILE",
    "variants": "FILE",
    "scores": "FILE",
    "write_batch": "FILE",
    "import_batch": "FILE",
    "conditions": "LIST",
    "base_url": "URL",
    "subset": "NAME",
    "scale": "MIN MAX",
    "factor_scale": "MIN MAX",
}
_BY_TYPE = {
    "int": "N",
    "int range": "N",
    "float": "X",
    "float range": "X",
    "str": "TEXT",
    "list[str]": "TEXT",
}


def _placeholder(param: Any, ctx: Any) -> str | None:
    if param.metavar is not None:
        return str(param.metavar)
    if getattr(param, "is_flag", False):
        return None  # an on/off flag takes no value
    if param.name in _BY_NAME:
        return _BY_NAME[param.name]
    label = str(_ORIGINAL(param, ctx)).strip("<>")
    if "," in label and "|" not in label:  # a tuple: --scale MIN MAX
        return " ".join("X" for _ in label.split(","))
    return _BY_TYPE.get(label, label.upper())


_ORIGINAL = typer.core.TyperOption.display_type


def install() -> None:
    """Once, when the CLI loads: Typer renders options through these two hooks."""
    typer.core.TyperOption.display_type_rich = _placeholder  # type: ignore[method-assign,assignment]
    typer.core.TyperOption._get_number_range_help_str = lambda self: None  # type: ignore[method-assign]
    # an argument shows its name (SPEC); its Python type (<str>) says nothing more
    typer.core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
