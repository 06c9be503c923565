"""The Typer application object, its consoles, and how errors become one line and an exit code."""

from __future__ import annotations

import copy
import logging
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import TYPE_CHECKING, Annotated, Any, TypeGuard, TypeVar

import typer
from rich.console import (
    Console,
    ConsoleOptions,
    ConsoleRenderable,
    Group,
    RenderableType,
    RenderHook,
    RenderResult,
)
from rich.markup import escape
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Column, Table
from rich.text import Text

from judgebench import __version__
from judgebench.cli import helptext
from judgebench.cli.exits import ExitCode
from judgebench.cli.progress_view import shown_progress
from judgebench.errors import JudgebenchError
from judgebench.records.sanitize import visible_controls

if TYPE_CHECKING:
    from pydantic import ValidationError

app = typer.Typer(
    name="judgebench",
    help=(
        "Meta-evaluation of LLM judges: does your judge keep its verdicts when the language "
        "switches (Judge-LS), and how far can bias move its scores (A-BB)?"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Off a terminal (pipes, CI logs) rich would wrap tables at 80 columns; give them room instead.
# emoji=False: rich would turn ':m:' in a spec such as 'openai-compatible:m:' into an emoji.
console = Console(width=None if sys.stdout.isatty() else 160, emoji=False)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160, emoji=False)


# a column whose longest cell is longer than this is prose (a verdict's reasons): it may wrap at
# words; any other cell (a number, a name, a verdict) is shown whole or the table is shown as records
_PROSE = 40


def _width(con: Console, cell: RenderableType) -> int:
    text = con.render_str(cell) if isinstance(cell, str) else cell
    return text.cell_len if isinstance(text, Text) else Measurement.get(con, con.options, text).maximum


def _needed(con: Console, column: Column) -> int:
    """The width a column needs so that no cell is cut or broken: its widest cell, or for prose its
    longest word; the header may wrap at words."""
    header = con.render_str(str(column.header)).plain.split() or [""]
    cells = [_width(con, c) for c in column.cells]
    widest = max(cells, default=0)
    if widest > _PROSE:
        words = [w for c in column.cells for w in (c.plain if isinstance(c, Text) else str(c)).split()]
        widest = max((len(w) for w in words), default=0)
    return max(widest, *(len(w) for w in header))


def fits(con: Console, table: Table, width: int) -> bool:
    """Whether `table` shows every number and name whole in `width` columns."""
    natural = Measurement.get(con, con.options.update_width(10**6), table).maximum
    contents = sum(max([_width(con, column.header), *(_width(con, c) for c in column.cells)])
                   for column in table.columns)
    return natural - contents + sum(_needed(con, column) for column in table.columns) <= width


def as_records(table: Table) -> Group:
    """A table too wide for the terminal as one block per row, `column  value` a line (as psql's
    expanded display), so that nothing is cut ("$0.6…") or broken ("48,4" over "58")."""
    parts: list[ConsoleRenderable] = []
    if table.title:
        parts.append(Text.from_markup(str(table.title), style="italic"))
    columns = [[str(c.header), list(c.cells)] for c in table.columns]
    for row in range(table.row_count):
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")
        for header, cells in columns:
            grid.add_row(header, cells[row] if row < len(cells) else "")  # type: ignore[arg-type]
        parts += [grid, Text("")]
    if table.caption:
        parts.append(Text.from_markup(str(table.caption), style="dim"))
    return Group(*parts)


class _Shown:
    """A renderable whose text shows control characters as their symbols (rich keeps ESC as it is),
    and a table too wide for the terminal as records instead of cut or broken cells."""

    def __init__(self, inner: ConsoleRenderable) -> None:
        self.inner = inner

    def __rich_console__(self, con: Console, options: ConsoleOptions) -> RenderResult:
        inner = self.inner
        if isinstance(inner, Table) and not fits(con, inner, options.max_width):
            inner = as_records(inner)
        for segment in con.render(inner, options):
            if segment.control is None and segment.text != "\n":
                shown = visible_controls(segment.text, keep="\n")
                if shown is not segment.text:
                    segment = Segment(shown, segment.style)
            yield segment


class _VisibleControls(RenderHook):
    """The one place the terminal is protected: data printed by any command (a subset name, an item
    id, a server's error text) can neither colour, move the cursor, retitle nor clear the terminal."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Shown(r) for r in renderables]


for _console in (console, err_console):
    _console.push_render_hook(_VisibleControls())

helptext.install()  # placeholders such as DIR and N in every --help, not Python types

F = TypeVar("F", bound=Callable[..., Any])

# Library warnings a command must show (a cache that cannot be written, a torn line skipped, waiting
# for a run lock, a batch left running at the provider): one plain line each on stderr, never read as
# markup.
_WARNING_LOGGERS = ("judgebench.batch", "judgebench.models", "judgebench.store.run_folder")


class _StderrLines(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(record.getMessage(), style="yellow", highlight=False, soft_wrap=True, markup=False)


@contextmanager
def _library_warnings() -> Iterator[None]:
    handler = _StderrLines(level=logging.WARNING)
    loggers = [logging.getLogger(name) for name in _WARNING_LOGGERS]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
    try:
        with _python_warnings():
            yield
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
            logger.propagate = True


# request fields whose flag is spelt otherwise (the rest: --field-name)
_FLAG_OF = {"latency_s": "--latency", "models": "--model", "template_path": "--template"}


def _flag_problem(exc: ValidationError) -> str:
    """The first problem of a request built from flags, named by its flag."""
    first = exc.errors()[0]
    field = str(first["loc"][-1]) if first["loc"] else ""
    flag = _FLAG_OF.get(field, f"--{field.replace('_', '-')}") if field else "a flag"
    return f"{flag}: {first['msg']} (got {first.get('input')!r})"


def _is_validation_error(exc: ValueError) -> TypeGuard[ValidationError]:
    """Whether a request refused a value. Told without importing pydantic (`--help` does not load
    it): a ValidationError can only have been raised once pydantic_core, which defines it, is loaded."""
    core = sys.modules.get("pydantic_core")
    return core is not None and isinstance(exc, core.ValidationError)


@contextmanager
def _python_warnings() -> Iterator[None]:
    """Python warnings (a modified LLMBar copy: LLMBarChecksumWarning) as one line each on stderr,
    `warning: ...`, and each message once per command however often the dataset is loaded: not
    Python's `file.py:187: Category: ...` with the source line below it."""
    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            err_console.print(
                f"warning: {text}", style="yellow", highlight=False, soft_wrap=True, markup=False
            )

    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)  # our warnings (UserWarning's kin): deduped above
        warnings.showwarning = show
        yield


def handle_errors(func: F) -> F:
    """Turn a JudgebenchError into a one-line reason on stderr and a non-zero exit."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _library_warnings(), shown_progress():
                return func(*args, **kwargs)
        except JudgebenchError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=ExitCode.ERROR) from None
        except ValueError as exc:  # a ValidationError: a flag value a request refused (NaN, out of range)
            if not _is_validation_error(exc):
                raise
            err_console.print(f"[bold red]error:[/] {escape(_flag_problem(exc))}", highlight=False)
            raise typer.Exit(code=ExitCode.USAGE) from None
        except OSError as exc:  # a path that is a folder where a file is expected, unreadable, ...
            names = [str(n) for n in (exc.filename, exc.filename2) if n]  # a rename names both
            where = f"{' -> '.join(names)}: " if names else ""
            reason = exc.strerror or str(exc)
            err_console.print(
                f"[bold red]error:[/] {escape(where + reason)}", highlight=False, soft_wrap=True
            )
            raise typer.Exit(code=ExitCode.ERROR) from None
        except KeyboardInterrupt:
            err_console.print(
                "interrupted: everything received so far is saved; rerun the same command to resume"
            )
            raise typer.Exit(code=ExitCode.INTERRUPTED) from None

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"judgebench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """judgebench: Judge-LS language-switching invariance and A-BB bias-bounded evaluation."""


# click's UsageError and ClickException, found through typer's public BadParameter: typer >= 0.26
# vendors click privately, older versions use click itself.
_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
_CLICK_EXCEPTION: type[Exception] = _USAGE_ERROR.__mro__[1]


def _listed(callback: Callable[..., Any]) -> Callable[[], None]:
    """A command's callback as its list entry needs it: its name and text, no parameter (and never
    run: see `for_args`)."""

    def listed() -> None:
        raise AssertionError(f"{callback.__name__} was built for the command list and cannot run")

    listed.__name__, listed.__qualname__, listed.__doc__ = (
        callback.__name__,
        callback.__qualname__,
        callback.__doc__,
    )
    return listed


def _listing(whole: typer.Typer) -> typer.Typer:
    """`whole` for its list of commands (`judgebench --help`): each command as registered (name,
    summary, panel, help) but with a callback of no parameters, so that Typer does not build the
    flags of every command from its signature (~25 ms) to show none of them. Its own callback (the
    options the page lists) as it is."""
    listing = copy.copy(whole)
    listing.registered_commands = [copy.copy(info) for info in whole.registered_commands]
    for info in listing.registered_commands:
        if info.callback is not None:
            info.callback = _listed(info.callback)
    listing.registered_groups = [copy.copy(info) for info in whole.registered_groups]
    for group in listing.registered_groups:
        if group.typer_instance is not None:
            group.typer_instance = _listing(group.typer_instance)
    return listing


def for_args(args: list[str]) -> typer.Typer:
    """The application as `args` need it, for Typer builds every command it holds from its signature
    before it parses a flag (~20 ms for all of them; one costs ~2 ms). Where the first argument names
    a command (`report --help`, `bbe --run DIR`): the app holding that command alone. For the command
    list (`judgebench --help`, or nothing): the app whose commands have no flags to build (nothing is
    run). Otherwise (`--version`, a misspelt command, which is told the names it might have meant):
    the whole app. What is printed and done is the same either way (tests/cli/test_startup.py)."""
    if args in ([], ["--help"]):
        return _listing(app)
    first = args[0]
    commands = [info for info in app.registered_commands if info.name == first]
    groups = [info for info in app.registered_groups if info.name == first]
    if not commands and not groups:
        return app
    only = copy.copy(app)  # the same settings, callback and help; the one command
    only.registered_commands, only.registered_groups = commands, groups
    return only


def main() -> None:
    """The console script. Usage errors (a bad flag value) print one line, `error: ...`, and the
    hint to `--help`, exit 2, as INTERFACE.md asks of every error (click's boxed panel does not)."""
    try:
        code = for_args(sys.argv[1:])(standalone_mode=False)
    except typer.Abort:  # Ctrl-C at a prompt, or a refused confirmation
        err_console.print("aborted", highlight=False)
        sys.exit(ExitCode.ERROR)
    except _USAGE_ERROR as exc:
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "judgebench"
        message = exc.format_message()  # type: ignore[attr-defined]
        if message.strip():  # empty for `judgebench` alone: the help was printed
            err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
            err_console.print(f"(see `{command} --help`)", highlight=False)
        sys.exit(getattr(exc, "exit_code", ExitCode.USAGE))
    except _CLICK_EXCEPTION as exc:
        message = exc.format_message()  # type: ignore[attr-defined]
        err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
        sys.exit(getattr(exc, "exit_code", ExitCode.ERROR))
    except BrokenPipeError:  # `judgebench ... | head`
        sys.exit(ExitCode.OK)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)
