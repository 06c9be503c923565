"""Length categories of items (the length probe's report table): which output is longer.

Read from the data where it says: an item's metadata `length_category`, else the category its
subset has in the length probe's `categories` (RewardBench's `alpacaeval-length` is its
length-matched subset); else measured: the chosen output at least `ratio` times as long as the
rejected one (or the reverse), else similar. An unlabelled item has none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgebench.records import Item

CHOSEN_LONGER = "chosen longer"
REJECTED_LONGER = "rejected longer"
SIMILAR = "similar length"
RATIO = 1.2


def length_category(item: Item, categories: Mapping[str, str], ratio: float = RATIO) -> str | None:
    declared = item.metadata.get("length_category")
    if isinstance(declared, str) and declared:
        return declared
    if item.subset in categories:
        return categories[item.subset]
    if item.label not in (1, 2):
        return None
    chosen = len(item.output_1 if item.label == 1 else item.output_2)
    rejected = len(item.output_2 if item.label == 1 else item.output_1)
    if chosen >= ratio * max(rejected, 1):
        return CHOSEN_LONGER
    if rejected >= ratio * max(chosen, 1):
        return REJECTED_LONGER
    return SIMILAR


def length_categories(items: Sequence[Item], categories: Mapping[str, str]) -> dict[str, str]:
    """item id -> its length category, for the items that have one."""
    out: dict[str, str] = {}
    for item in items:
        category = length_category(item, categories)
        if category is not None:
            out[item.id] = category
    return out
