"""CLI for `judgebench data`: look at a dataset before spending calls on it."""

from __future__ import annotations

import json
import logging
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.table import Table

from judgebench.cli.app import DataDirOpt, app, console, err_console, handle_errors
from judgebench.data import (
    LLMBAR_SUBSETS,
    OTHER_SETS,
    Dataset,
    llmbar_root,
    load_dataset,
    sample_path,
)
from judgebench.errors import ConfigError

data_app = typer.Typer(
    name="data",
    help="Inspect datasets: LLMBar (local copy or download), the bundled sample, your own files.",
    no_args_is_help=True,
)
app.add_typer(data_app, name="data")

SPEC_HELP = (
    "llmbar (419 items), llmbar:SET (e.g. llmbar:CaseStudy/Constraint, llmbar:Processed/MT-Bench, "
    "llmbar:Adversarial), sample (bundled), or a .jsonl/.json/.csv/.tsv file (write ./sample for a "
    "file named sample)."
)
SpecArg = Annotated[str, typer.Argument(metavar="SPEC", help=SPEC_HELP, show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]
SubsetOpt = Annotated[
    str | None,
    typer.Option("--subset", help="Keep one subset and those below it (Adversarial = its four sets)."),
]
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
        err_console.print(f"[yellow]warning:[/] {warning.message}", highlight=False, soft_wrap=True)


def _table(dataset: Dataset) -> Table:
    by_subset: dict[str, Counter[int | None]] = {}
    for item in dataset.items:
        by_subset.setdefault(item.subset, Counter())[item.label] += 1
    unlabelled = any(counts[None] for counts in by_subset.values())
    table = Table(title=f"{dataset.spec}: {len(dataset)} items", title_justify="left")
    table.add_column("subset")
    for name in ("items", "label 1", "label 2", *(("unlabelled",) if unlabelled else ())):
        table.add_column(name, justify="right")

    def row(name: str, counts: Counter[int | None], style: str | None = None) -> None:
        cells = [str(counts.total()), str(counts[1]), str(counts[2])]
        table.add_row(name, *cells, *((str(counts[None]),) if unlabelled else ()), style=style)

    total: Counter[int | None] = Counter()
    for name, counts in by_subset.items():
        row(name, counts)
        total.update(counts)
    if len(by_subset) > 1:
        table.add_section()
        row("all", total, style="bold")
    return table


SHOW_HELP = (
    "Load a dataset, validate every item, and print its size, subsets, labels and checksum.\n\n"
    'With --json the object is {"items", "subsets", "labels", "spec", "subset", "source", "checksum"}.\n\n'
    "Without --data-dir, LLMBar is downloaded once into the user cache (JUDGEBENCH_CACHE_DIR) and "
    "verified against its published SHA-256 sums; JUDGEBENCH_LLMBAR_URL overrides the download base. "
    "A local copy is used as it is: files that differ from the published ones draw a warning."
)


@data_app.command("show", help=SHOW_HELP)
@handle_errors
def show_command(
    spec: SpecArg,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
    subset: SubsetOpt = None,
    field: FieldOpt = None,
) -> None:
    """`data show`: the library's Dataset.describe() as a table or JSON (help: SHOW_HELP)."""
    with reported_warnings():
        dataset = load_dataset(spec, data_dir=data_dir, mapping=parse_fields(field), subset=subset)
    if as_json:
        info = dataset.describe()
        info.update(
            spec=dataset.spec, subset=dataset.subset, source=dataset.source, checksum=dataset.checksum
        )
        typer.echo(json.dumps(info, ensure_ascii=False, indent=2))
        return
    console.print(_table(dataset))
    console.print(f"source:   {dataset.source}", highlight=False, soft_wrap=True)
    console.print(f"checksum: sha256:{dataset.checksum}", highlight=False, soft_wrap=True)


@data_app.command("list")
@handle_errors
def list_command(data_dir: DataDirOpt = None) -> None:
    """List the named datasets and whether each is available here (bundled, cached or local)."""
    root = llmbar_root(data_dir)
    where = "local copy" if data_dir is not None else "download cache"
    table = Table(title="datasets", title_justify="left")
    for name in ("SPEC", "what", "available"):
        table.add_column(name)
    table.add_row("sample", "bundled sample set", "yes" if sample_path().is_file() else "missing")
    absent = "missing" if data_dir is not None else "downloads on use"
    have = all((root / rel).is_file() for rel in LLMBAR_SUBSETS.values())
    table.add_row("llmbar", "LLMBar: 5 subsets", where if have else absent)
    for name, rel in OTHER_SETS.items():
        table.add_row(f"llmbar:{name}", "other LLMBar set", where if (root / rel).is_file() else absent)
    console.print(table)
    console.print(f"LLMBar {where}: {root}", highlight=False, soft_wrap=True)
    if data_dir is None and not have:
        console.print(
            "offline? pass --data-dir DIR (the folder that holds LLMBar's Dataset/)", highlight=False
        )
