"""The shape of the code, checked: which room may import which, no cycles, imports at the top, small
modules. A change that breaks one of these belongs in another room, or the rule is to be revised
here with the README's architecture section."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from graphlib import CycleError, TopologicalSorter

import pytest

from tests.architecture.imports import ALL, PACKAGE, Import, all_imports, internal, room

# Each room and the rooms it may import (beyond itself and the package root, for __version__).
# Data flows forward: items -> variants -> calls -> judgments -> metrics -> report / bbe.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "progress": set(),
    "palette": set(),  # one colour per judge in every figure (report and bbe alike)
    "wire": set(),  # HTTP hygiene for every outside connection (providers' SDKs, the hub)
    "plugins": {"errors"},  # entry-point groups read one way (metrics, report outputs)
    "records": set(),
    # the run folder: manifest, append-only logs with torn-line repair, per-file indexes, the
    # judgments' columnar table and its fingerprinted cache, atomic writes, locks; the judgment schema
    # once (derived from the records). Low: records, errors and outside files only
    "store": {"errors", "outside", "records"},
    # JSON and TOML from outside files, read strictly (repeated keys, deep nesting refused)
    "outside": {"errors"},
    # configuration: the one loader of every configuration file (strict TOML, a typed model, one
    # error style), where the configs/data/cache folders are, each flag's default stated once; a low
    # room, below everything that reads a configuration file
    "config": {"errors", "outside", "records"},
    "conditions": {"config", "errors", "outside", "records"},
    "data": {"config", "errors", "outside", "records", "store", "wire"},
    "models": {"config", "errors", "outside", "records", "store", "wire"},
    "batch": {"config", "errors", "models", "outside", "records", "store"},
    "translate": {
        "batch",
        "conditions",
        "config",
        "errors",
        "models",
        "outside",
        "progress",
        "records",
        "store",
    },
    "judge": {"conditions", "config", "errors", "models", "outside", "records", "store"},
    # probe conditions (configs/probes/): text transforms of the items, no model call
    "probes": {"conditions", "config", "errors", "outside", "records"},
    # the one way planned judge calls are made; `--until-settled` asks analysis when to stop
    "execution": {"analysis", "batch", "config", "errors", "judge", "models", "progress", "records", "store"},
    # what calls will cost before they are made (estimates, reply tokens, budget and batch checks)
    "costing": {
        "batch",
        "config",
        "errors",
        "judge",
        "models",
        "outside",
        "progress",
        "records",
        "store",
        "translate",
    },
    "analysis": {"conditions", "config", "data", "errors", "plugins", "records", "store"},
    # peer judge logs read as items and judgments, one module per format (a registry, plugins by entry point)
    "importers": {"data", "errors", "outside", "records", "store"},
    # human labels: their file (read like every input, data/'s readers), agreement, PPI++, budgets
    "human": {"analysis", "data", "errors", "outside", "records"},
    # selective judging (PROTOCOL §8): confidences, thresholds, cascades; pure, like analysis/
    "selective": {"analysis", "errors", "records"},
    "bbe": {"analysis", "errors", "outside", "palette", "records", "store"},
    "report": {"analysis", "config", "errors", "human", "palette", "plugins", "records", "store"},
    # drift between two runs: their judgment tables paired, the statistics, and its files (drawn with
    # the report's content model and Markdown renderer)
    "compare": {"analysis", "errors", "records", "report", "store"},
    "api": {
        "analysis",
        "batch",
        "bbe",
        "compare",
        "conditions",
        "config",
        "costing",
        "data",
        "errors",
        "execution",
        "human",
        "importers",
        "judge",
        "models",
        "probes",
        "progress",
        "records",
        "report",
        "selective",
        "store",
        "translate",
    },
    # the CLI: the library's public API, its errors and records, its own modules, progress's
    # clock() (durations are written one way everywhere; progress needs nothing but rich),
    # and the importer registry (`import`'s help lists its formats, plugins included); data: its
    # registry (data/catalog.py, no pydantic) only, so that the help lists the datasets
    "cli": {"api", "config", "data", "errors", "importers", "progress", "records"},
    "__main__": {"cli"},
}
# Registries whose contents a help text lists (issue 42: `--certificate`, `--probes`): the CLI may
# read these modules, and only these of their rooms, inside the function that builds the help
REGISTRIES_FOR_HELP = {f"{PACKAGE}.bbe.certificate_registry", f"{PACKAGE}.probes.probe_registry"}
# ... and the certificate registry loads its numpy arithmetic when a certificate is built, so that
# `bbe --help` lists the registered names without numpy
LOADED_ON_FIRST_BUILD = {
    (f"{PACKAGE}.bbe.certificate_registry", f"{PACKAGE}.bbe.certificates"),
    (f"{PACKAGE}.bbe.certificate_registry", f"{PACKAGE}.bbe.mechanism"),
}
# A review threshold, not a cap that cuts a concern in pieces: a module is as long as its concern,
# and one past this is looked at (split where it holds two concerns, or raise this with the reason).
MAX_MODULE_LINES = 800

# Rooms a room must never depend on, directly or through another room, type-only imports included:
# the metrics and the bias bounds are functions of judgments and scores, never of how calls are made;
# the provider layer knows nothing of what its calls are for.
NEVER: dict[str, set[str]] = {
    "analysis": {"api", "execution", "judge", "models"},
    "bbe": {"api", "execution", "judge", "models"},
    "selective": {"api", "execution", "judge", "models"},
    "models": {"api", "execution", "judge", "translate"},
    "store": {"analysis", "api", "execution", "judge", "models"},
}
# The CLI renders; the library returns typed results and logs. Below the CLI no module imports a
# terminal library or the CLI, calls print(), or touches sys.stdout / sys.stderr.
CLI_ROOMS = {"cli", "__main__"}
TERMINAL_LIBRARIES = ("rich", "typer", "click", "tqdm")
STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}
# analysis/ is pure: it reads no file (its callers pass what they read) and takes from other rooms
# only records, errors and constants.
PURE_ROOMS = {"analysis", "selective"}
# and constants from anywhere; plugins: the metric registry loads the metrics installed packages
# declare (code, as an import would; no run file is read)
PURE_MAY_TAKE_ANYTHING_FROM = {"analysis", "records", "errors", "selective", "plugins"}
IO_LIBRARIES = {"os", "io", "pathlib", "shutil", "tempfile", "glob", "tomllib", "json", "csv", "pickle"}
IO_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "read_csv", "read_json"}


def _crossing(imp: Import) -> bool:
    return internal(imp) and imp.target != PACKAGE and room(imp.module) != room(imp.target)


def test_every_module_belongs_to_a_known_room() -> None:
    rooms = {room(name) for name in ALL if name != PACKAGE}
    assert rooms <= set(ALLOWED), f"rooms without a rule: {sorted(rooms - set(ALLOWED))}"


def layer_problems(imports: Iterable[Import]) -> list[str]:
    return [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in imports
        if _crossing(imp)
        and room(imp.target) not in ALLOWED[room(imp.module)]
        # type-only imports name types; the CLI takes even those from the public API
        and (not imp.type_only or room(imp.module) == "cli")
        and not (room(imp.module) == "cli" and imp.target in REGISTRIES_FOR_HELP)
    ]


def test_rooms_import_only_what_their_layer_allows() -> None:
    bad = layer_problems(all_imports())
    assert not bad, "\n".join(bad)


def test_the_cli_takes_only_the_dataset_registry_from_data() -> None:
    """The CLI may read the dataset registry (its help lists the datasets) and nothing else of data/:
    loading a dataset is the library's job, through api."""
    bad = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if room(imp.module) == "cli"
        and room(imp.target) == "data"
        and imp.target != f"{PACKAGE}.data.catalog"
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


def below_api_problems(imports: Iterable[Import]) -> list[str]:
    return [
        f"{imp.module}:{imp.line}"
        for imp in imports
        if room(imp.target) == "api" and room(imp.module) not in ("api", "cli")
    ]


def test_no_module_below_the_api_imports_it() -> None:
    bad = below_api_problems(all_imports())
    assert not bad, bad
    # and the table grants it to no room but the CLI, so no room can reach it through another
    assert [name for name, rooms in ALLOWED.items() if "api" in rooms] == ["cli"]


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), set()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_rooms_never_reach_what_they_must_not_know() -> None:
    """analysis/ and bbe/ reach neither judge/, execution, models/ nor api/; models/ reaches neither
    judge/, translate/, execution nor api/: not in the table, not through another room, not even for
    a type."""
    for name, forbidden in NEVER.items():
        by_table = _reachable(ALLOWED, name) & forbidden
        assert not by_table, f"ALLOWED lets {name} reach {sorted(by_table)}"
    bad = never_problems(all_imports())
    assert not bad, bad


def never_problems(imports: Iterable[Import]) -> list[str]:
    actual: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        if _crossing(imp):  # type-only imports count here
            actual[room(imp.module)].add(room(imp.target))
    return [
        f"{name} reaches {sorted(found)} through its imports"
        for name, forbidden in NEVER.items()
        if (found := _reachable(actual, name) & forbidden)
    ]


def _renders(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append((node.lineno, "calls print()"))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in STREAMS
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            found.append((node.lineno, f"uses sys.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            found += [(node.lineno, f"imports sys.{a.name}") for a in node.names if a.name in STREAMS]
    return found


def render_problems(imports: Iterable[Import], sources: Mapping[str, str]) -> list[str]:
    bad = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in imports
        if room(imp.module) not in CLI_ROOMS
        and (
            imp.target.partition(".")[0] in TERMINAL_LIBRARIES
            or (internal(imp) and room(imp.target) in CLI_ROOMS)
        )
    ]
    for name, source in sources.items():
        if room(name) not in CLI_ROOMS:
            bad += [f"{name}:{line} {what}" for line, what in _renders(ast.parse(source))]
    return sorted(set(bad))  # one line per name a `from rich.x import (...)` takes


def test_only_the_cli_renders() -> None:
    bad = render_problems(all_imports(), {name: path.read_text() for name, path in ALL.items()})
    assert not bad, "\n".join(bad)


def _io_in(name: str, tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"imports {a.name}" for a in node.names if a.name.partition(".")[0] in IO_LIBRARIES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.partition(".")[0]
            if top in IO_LIBRARIES:
                found.append(f"imports {node.module}")
            elif top == PACKAGE and room(node.module) not in PURE_MAY_TAKE_ANYTHING_FROM:
                found += [f"takes {a.name} from {node.module}" for a in node.names if not a.name.isupper()]
        elif isinstance(node, ast.Call):
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if called in IO_CALLS:
                found.append(f"calls {called}() at line {node.lineno}")
    return [f"{name}: {what}" for what in found]


def test_analysis_reads_no_file() -> None:
    bad = [
        problem
        for name, path in ALL.items()
        if room(name) in PURE_ROOMS
        for problem in _io_in(name, ast.parse(path.read_text()))
    ]
    assert not bad, "\n".join(bad)


def test_imports_sit_at_the_top() -> None:
    """No import inside a function to dodge a cycle. The exceptions: CLI commands load the library
    when they run, so that `judgebench --help` does not pay for pandas, scipy and matplotlib; a help
    text reads its registry when built; the certificate registry loads its arithmetic on a build."""
    bad = [
        f"{imp.module}:{imp.line} imports {imp.target} inside a function"
        for imp in all_imports()
        if internal(imp)
        and imp.in_function
        and not imp.type_only
        and not (room(imp.module) == "cli" and imp.target in {f"{PACKAGE}.api", *REGISTRIES_FOR_HELP})
        and (imp.module, imp.target) not in LOADED_ON_FIRST_BUILD
    ]
    assert not bad, "\n".join(bad)


def test_no_module_is_too_long() -> None:
    long = {
        name: n for name, path in ALL.items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, long
