"""CLI for `judgebench data`: look at a dataset before spending calls on it."""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.markup import escape

from judgebench.cli import render
from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, err_console, handle_errors
from judgebench.data.catalog import spec_help
from judgebench.errors import ConfigError

data_app = typer.Typer(
    name="data",
    help="Inspect datasets: the registered ones (judgebench data list) and your own files.",
    no_args_is_help=True,
)
app.add_typer(data_app, name="data")

# every registered dataset (data/catalog.py: judgebench's own, configs/hub_datasets.toml, plugins)
SPEC_HELP = spec_help()
SpecArg = Annotated[str, typer.Argument(metavar="SPEC", help=SPEC_HELP, show_default=False)]
FieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        metavar="FIELD=COLUMN",
        help=(
            "Read FIELD (id, subset, instruction, output_1, output_2, label) from COLUMN of your file; "
            "repeat for several, e.g. --field instruction=prompt --field label=winner. Common names "
            "(prompt, response_a, response_b, winner, ...) are recognised without it."
        ),
    ),
]


def parse_fields(values: list[str] | None) -> dict[str, str] | None:
    """`--field instruction=prompt` options as a mapping {field: column}."""
    if not values:
        return None
    out: dict[str, str] = {}
    for value in values:
        field, sep, column = value.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not field or not column:
            raise ConfigError(f"--field '{value}': expected FIELD=COLUMN, e.g. --field instruction=prompt")
        if field in out and out[field] != column:
            raise ConfigError(f"--field: '{field}' is mapped twice ({out[field]}, {column})")
        out[field] = column
    return out


@contextmanager
def reported_warnings() -> Iterator[None]:
    """Show library warnings (a modified LLMBar copy) and download progress as plain stderr lines."""
    handler = logging.Handler(level=logging.INFO)
    handler.emit = lambda record: err_console.print(  # type: ignore[method-assign]
        f"{record.getMessage()}", style="dim", highlight=False, soft_wrap=True
    )
    logger = logging.getLogger("judgebench.data")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    for warning in caught:
        err_console.print(
            f"[yellow]warning:[/] {escape(str(warning.message))}", highlight=False, soft_wrap=True
        )


SHOW_HELP = (
    "Load a dataset, validate every item, and print its size, subsets, labels and checksum.\n\n"
    'With --json the object is {"items", "subsets", "labels", "spec", "subset", "source", "checksum"}.\n\n'
    "Without --data-dir, LLMBar is downloaded once into the user cache (JUDGEBENCH_CACHE_DIR) and "
    "verified against its published SHA-256 sums; JUDGEBENCH_LLMBAR_URL overrides the download base. "
    "A local copy is used as it is: files that differ from the published ones draw a warning.\n\n"
    "The hub datasets of configs/hub_datasets.toml come from the Hugging Face hub at the revisions "
    "pinned there (HF_ENDPOINT honoured), or with --data-dir DIR from local snapshots in the hub's "
    "layout, DIR/<local_dir>/<files> (e.g. DIR/reward-bench/data/filtered-*.parquet). "
    'Their --json adds "languages" (items per condition), "missing", "categories" and "excluded".'
)


@data_app.command("show", help=SHOW_HELP)
@handle_errors
def show_command(
    spec: SpecArg,
    data_dir: opt.DataDirOpt = None,
    as_json: opt.JsonOpt = False,
    subset: opt.ShowSubsetOpt = None,
    field: FieldOpt = None,
    skip_bad_rows: opt.SkipBadRowsOpt = False,
) -> None:
    """`data show`: the library's Dataset.describe() as a table or JSON (help: SHOW_HELP)."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    with reported_warnings():
        dataset = api.show_dataset(
            spec, data_dir=data_dir, mapping=parse_fields(field), subset=subset, skip_bad_rows=skip_bad_rows
        )
    if as_json:
        info = dataset.describe()
        info.update(
            spec=dataset.spec, subset=dataset.subset, source=dataset.source, checksum=dataset.checksum
        )
        typer.echo(json.dumps(info, ensure_ascii=False, indent=2))
        return
    render.dataset(dataset)


@data_app.command("list")
@handle_errors
def list_command(data_dir: opt.DataDirOpt = None) -> None:
    """List every registered dataset and whether each is available here (bundled, cached or local)."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    render.dataset_list(api.list_datasets(data_dir))
