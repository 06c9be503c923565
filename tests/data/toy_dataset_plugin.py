"""A dataset family from another package, the way a plugin adds one: a `DatasetFamily` named by an
entry point of the group `judgebench.datasets` (tests/data/test_dataset_registry.py writes the
distribution's metadata). Its loader makes N items in code."""

from __future__ import annotations

from judgebench.data.catalog import DatasetFamily, DatasetRequest, Listing
from judgebench.data.dataset import Dataset
from judgebench.records import Item


def load(request: DatasetRequest) -> Dataset:
    count = int(request.suffix or 4)
    items = [
        Item(
            id=f"toyplug/{n}",
            subset="toy",
            instruction=f"Write the number {n} in words.",
            output_1=f"The number {n} in words.",
            output_2="No.",
            label=1,
        )
        for n in range(count)
    ]
    return Dataset(spec=request.spec, items=items, source="toydata plugin")


def listing(name: str, data_dir: str | None) -> list[Listing]:
    return [Listing(name, "toy items made up in code by a plugin", "yes")]


TOYPLUG = DatasetFamily(
    name="toyplug",
    description="toy items made up in code by a plugin",
    load=load,
    suffix="N",
    suffix_help="its first N items",
    listing=listing,
)
