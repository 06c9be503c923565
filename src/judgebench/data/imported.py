"""The items of an imported run (`judgebench import FORMAT`): the importer writes them, one `Item` a
line, into the run folder as `imported_items.jsonl`, and the run's dataset is `imported` with the run
folder as its data dir, so every later stage (report, human labels, new calls) reads them back."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from judgebench.data.catalog import DatasetRequest, Listing
from judgebench.data.dataset import Dataset, select_subset
from judgebench.errors import InputError
from judgebench.records import Item

IMPORTED_SPEC = "imported"
IMPORTED_ITEMS = "imported_items.jsonl"


def load_imported(folder: str | Path | None) -> tuple[list[Item], str, dict[str, str]]:
    """(items, source, {file: SHA-256}) of the run folder `folder`."""
    if folder is None:
        raise InputError(f"the '{IMPORTED_SPEC}' dataset is read from a run folder: give its --data-dir")
    path = Path(folder) / IMPORTED_ITEMS
    if not path.is_file():
        raise InputError(
            "no imported items: run `judgebench import FORMAT --run DIR FILE...` first", path=str(path)
        )
    raw = path.read_bytes()
    items: list[Item] = []
    for number, line in enumerate(raw.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            items.append(Item.model_validate_json(line))
        except ValidationError as exc:
            raise InputError(f"not an item: {exc.errors()[0]['msg']}", path=str(path), line=number) from None
    return items, str(path.resolve()), {str(path): hashlib.sha256(raw).hexdigest()}


# --- the registered family (data/catalog.py): an imported run's own items ---


def load_family(request: DatasetRequest) -> Dataset:
    """`imported`: the items `judgebench import` wrote into the run folder (`--data-dir`)."""
    items, source, files = load_imported(request.data_dir)
    if request.subset is not None:
        items = select_subset(items, request.subset, shown=request.spec)
    return Dataset(spec=request.spec, items=items, source=source, subset=request.subset, files=files)


def listing(name: str, data_dir: str | None) -> list[Listing]:
    """No row in `data list`: an imported run's items are read from that run, not looked up."""
    del name, data_dir
    return []

