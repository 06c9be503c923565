"""The shape of the code, checked: which room may import which, no cycles, imports at the top, small
modules. A change that breaks one of these belongs in another room, or the rule is to be revised
here with the README's architecture section."""

from __future__ import annotations

from collections import defaultdict
from graphlib import CycleError, TopologicalSorter

import pytest

from tests.architecture.imports import ALL, PACKAGE, Import, all_imports, internal, room

# Each room and the rooms it may import (beyond itself and the package root, for __version__).
# Data flows forward: items -> variants -> calls -> judgments -> metrics -> report / bbe.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "paths": set(),
    "fileio": set(),
    "progress": set(),
    "palette": set(),  # one colour per judge in every figure (report and bbe alike)
    "defaults": set(),  # each flag's default, stated once (request models, settings and the CLI)
    "wire": set(),  # HTTP hygiene for every outside connection (providers' SDKs, the hub)
    "records": set(),
    "runindex": set(),  # what an append-only run file holds, kept in step with its appends
    "rundir": {"errors", "fileio", "records", "runindex"},
    "conditions": {"errors", "paths", "records"},
    "data": {"errors", "fileio", "paths", "records", "rundir", "wire"},
    "models": {"defaults", "errors", "fileio", "paths", "records", "wire"},
    "batch": {"errors", "fileio", "models", "records", "rundir"},
    "translate": {
        "batch",
        "conditions",
        "errors",
        "fileio",
        "models",
        "paths",
        "progress",
        "records",
        "rundir",
    },
    "judge": {"conditions", "errors", "models", "paths", "records", "rundir"},
    "execution": {"batch", "defaults", "errors", "judge", "models", "progress", "records", "rundir"},
    # what calls will cost before they are made (estimates, reply tokens, budget and batch checks)
    "costing": {"batch", "errors", "judge", "models", "paths", "records", "rundir", "translate"},
    "analysis": {"conditions", "data", "errors", "records", "rundir"},
    "bbe": {"analysis", "errors", "fileio", "palette", "records", "rundir"},
    "report": {"analysis", "errors", "fileio", "palette", "records", "rundir"},
    "api": {
        "analysis",
        "batch",
        "bbe",
        "conditions",
        "costing",
        "data",
        "defaults",
        "errors",
        "execution",
        "fileio",
        "judge",
        "models",
        "paths",
        "progress",
        "records",
        "report",
        "rundir",
        "translate",
    },
    # the CLI: the library's public API, its errors and records, and its own modules
    "cli": {"api", "defaults", "errors", "records"},
    "__main__": {"cli"},
}
MAX_MODULE_LINES = 500


def _crossing(imp: Import) -> bool:
    return internal(imp) and imp.target != PACKAGE and room(imp.module) != room(imp.target)


def test_every_module_belongs_to_a_known_room() -> None:
    rooms = {room(name) for name in ALL if name != PACKAGE}
    assert rooms <= set(ALLOWED), f"rooms without a rule: {sorted(rooms - set(ALLOWED))}"


def test_rooms_import_only_what_their_layer_allows() -> None:
    bad = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if _crossing(imp)
        and room(imp.target) not in ALLOWED[room(imp.module)]
        # type-only imports name types; the CLI takes even those from the public API
        and (not imp.type_only or room(imp.module) == "cli")
    ]
    assert not bad, "\n".join(bad)


def test_no_import_cycle_between_rooms() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in all_imports():
        if _crossing(imp) and not imp.type_only:
            graph[room(imp.module)].add(room(imp.target))
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"import cycle between rooms: {exc.args[1]}")


def test_no_module_below_the_api_imports_it() -> None:
    bad = [
        f"{imp.module}:{imp.line}"
        for imp in all_imports()
        if room(imp.target) == "api" and room(imp.module) not in ("api", "cli")
    ]
    assert not bad, bad


def test_imports_sit_at_the_top() -> None:
    """No import inside a function to dodge a cycle. The one exception: CLI commands load the library
    when they run, so that `judgebench --help` does not pay for pandas, scipy and matplotlib."""
    bad = [
        f"{imp.module}:{imp.line} imports {imp.target} inside a function"
        for imp in all_imports()
        if internal(imp)
        and imp.in_function
        and not imp.type_only
        and not (room(imp.module) == "cli" and imp.target == f"{PACKAGE}.api")
    ]
    assert not bad, "\n".join(bad)


def test_no_module_is_too_long() -> None:
    long = {
        name: n for name, path in ALL.items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, long
