"""Subsets (PROTOCOL §4 path names) and their one reading order, shared by analysis and report.

The source of truth is LLMBar's list (`judgebench.data.llmbar.LLMBAR_SUBSETS`, the paper's order):
`all` first, then its subsets in that order with each aggregate (`Adversarial`) just before its
first member; any other subset follows by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from judgebench.analysis.findings import ALL
from judgebench.data.llmbar import LLMBAR_SUBSETS


def unique(values: Iterable[str]) -> list[str]:
    """The values in first-seen order, each once."""
    return list(dict.fromkeys(values))


def _reading_order(leaves: Iterable[str]) -> dict[str, int]:
    names = [ALL]
    for leaf in leaves:
        top = leaf.split("/", 1)[0]
        if top != leaf and top not in names:
            names.append(top)
        names.append(leaf)
    return {name: rank for rank, name in enumerate(names)}


_RANK = _reading_order(LLMBAR_SUBSETS)


def subset_sort_key(name: str) -> tuple[int, str]:
    """Sort key of a subset name: LLMBar's reading order (`all`, Natural, Adversarial, ...), then by name."""
    return (_RANK.get(name, len(_RANK)), name)


def subset_groups(leaves: Sequence[str]) -> dict[str, list[str]]:
    """`all`, then each top-level path with its aggregate before its leaves (Natural, Adversarial, ...)."""
    groups: dict[str, list[str]] = {ALL: list(leaves)}
    for top in unique(leaf.split("/", 1)[0] for leaf in leaves):
        members = [leaf for leaf in leaves if leaf == top or leaf.startswith(top + "/")]
        if any("/" in m for m in members):
            groups[top] = members
        for leaf in members:
            groups.setdefault(leaf, [leaf])
    return groups


def leaf_subsets(subsets: Iterable[str]) -> list[str]:
    """The finest subsets (Natural, Adversarial/Neighbor, ...): not `all` and not a parent of another."""
    names = [s for s in subsets if s != ALL]
    leaves = [s for s in names if not any(o != s and o.startswith(s + "/") for o in names)]
    return sorted(leaves, key=subset_sort_key)
