"""What other packages declare in an entry-point group, read one way for every registry that takes
plugins (metrics, report outputs): each entry point must name an object of the registry's type and a
name not taken, and an error names the entry point."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TypeVar

from judgebench.errors import JudgebenchError

T = TypeVar("T")


def declared(
    group: str, kind: type[T], name_of: Callable[[T], str], taken: Collection[str], what: str
) -> dict[str, T]:
    """Each object the group's entry points name, by its name (`name_of`); another type, or a name
    in `taken` or declared twice, is an error naming the entry point (`what`: "metric")."""
    # imported here: importlib.metadata brings email, zipfile and socket (~50 ms) a help page skips
    from importlib.metadata import entry_points

    found: dict[str, T] = {}
    for ep in entry_points(group=group):
        where = f"entry point {ep.name} = {ep.value} ({group})"
        obj = ep.load()
        if not isinstance(obj, kind):
            raise JudgebenchError(f"{where} is a {type(obj).__name__}, not a {kind.__name__}")
        name = name_of(obj)
        if name in taken or name in found:
            raise JudgebenchError(f"{where}: {what} {name!r} is declared twice")
        found[name] = obj
    return found
