"""`judgebench cache info|clear`: the response store every stage shares."""

from __future__ import annotations

import typer

from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, console, handle_errors
from judgebench.cli.exits import ExitCode

cache_app = typer.Typer(help="Inspect or clear the response cache (JUDGEBENCH_CACHE_DIR moves it).")
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
@handle_errors
def cache_info() -> None:
    """Where the cache is, how big, and how many answers per model."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    info = api.cache_info()
    console.print(f"{info['path']}: {info['entries']:,} answers, {info['size_bytes'] / 1e6:.1f} MB")
    for spec, count in info["by_model"].items():
        console.print(f"  {spec}: {count:,}")


@cache_app.command("clear")
@handle_errors
def cache_clear(
    model: opt.CacheModelOpt = None,
    yes: opt.ClearYesOpt = False,
) -> None:
    """Delete stored answers: the next run pays for them again."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    if not yes and not typer.confirm(
        f"Delete {'all' if model is None else model} cached answers?", default=False
    ):
        raise typer.Exit(code=ExitCode.ERROR)
    console.print(f"removed {api.cache_clear(model):,} answer(s)")
