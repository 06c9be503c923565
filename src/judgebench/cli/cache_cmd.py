"""`judgebench cache info|clear`: the response store every stage shares."""

from __future__ import annotations

from typing import Annotated

import typer

from judgebench.cli.app import app, console, handle_errors
from judgebench.models.cache import default_cache

cache_app = typer.Typer(help="Inspect or clear the response cache (JUDGEBENCH_CACHE_DIR moves it).")
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
@handle_errors
def cache_info() -> None:
    """Where the cache is, how big, and how many answers per model."""
    with default_cache() as cache:
        info = cache.info()
    console.print(f"{info['path']}: {info['entries']:,} answers, {info['size_bytes'] / 1e6:.1f} MB")
    for spec, count in info["by_model"].items():
        console.print(f"  {spec}: {count:,}")


@cache_app.command("clear")
@handle_errors
def cache_clear(
    model: Annotated[str | None, typer.Option("--model", help="Only this model spec's answers.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete stored answers: the next run pays for them again."""
    if not yes and not typer.confirm(
        f"Delete {'all' if model is None else model} cached answers?", default=False
    ):
        raise typer.Exit(code=1)
    with default_cache() as cache:
        removed = cache.clear(spec=model)
    console.print(f"removed {removed:,} answer(s)")
