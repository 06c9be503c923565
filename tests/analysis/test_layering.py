"""The shape of analysis/ and report/: what each may import, imports at the top, no cycle, one reader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import judgebench

SRC = Path(judgebench.__file__).parent
PACKAGES = ("analysis", "report")
# analysis is a pure function of judgments; the report renders it and reads bbe.json as a record
ABOVE = tuple(f"judgebench.{name}" for name in ("models", "judge", "bbe", "api", "cli", "execution"))
FORBIDDEN = {"analysis": (*ABOVE, "judgebench.report"), "report": ABOVE}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(node: ast.Import | ast.ImportFrom) -> list[str]:
    """judgebench modules an import statement loads (`from pkg import sub` counts as pkg.sub)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.module is None:
        return []
    subs = [f"{node.module}.{a.name}" for a in node.names]
    modules = [s for s in subs if (SRC.parent / (s.replace(".", "/") + ".py")).is_file()]
    return modules if len(modules) == len(subs) else [node.module]


def _imports() -> dict[str, tuple[set[str], list[tuple[int, str]]]]:
    """Per module: judgebench modules imported at the top, and (line, module) of any other import."""
    out = {}
    for package in PACKAGES:
        for path in sorted((SRC / package).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            top = {id(n) for n in tree.body}
            deps: set[str] = set()
            nested: list[tuple[int, str]] = []
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    for target in _targets(node):
                        if id(node) in top:
                            deps.add(target)
                        else:
                            nested.append((node.lineno, target))
            out[_module_name(path)] = (deps, nested)
    return out


IMPORTS = _imports()


@pytest.mark.parametrize("module", sorted(IMPORTS))
def test_imports_are_at_the_top(module: str) -> None:
    """No import inside a function or an `if` (to dodge a cycle or otherwise)."""
    assert IMPORTS[module][1] == []


@pytest.mark.parametrize("module", sorted(IMPORTS))
def test_no_import_from_above(module: str) -> None:
    package = module.split(".")[1]
    assert [d for d in IMPORTS[module][0] if d.startswith(FORBIDDEN[package])] == []


def test_no_import_cycle() -> None:
    graph = {m: {d for d in deps if d in IMPORTS and d != m} for m, (deps, _) in IMPORTS.items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            assert state.get(dep) != 1, " -> ".join([*path, dep])
            if dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_only_the_package_reexports_the_run_reader() -> None:
    """run_inputs (file I/O) is a leaf: nothing in analysis/ or report/ builds on it."""
    users = {m for m, (deps, _) in IMPORTS.items() if "judgebench.analysis.run_inputs" in deps}
    assert users == {"judgebench.analysis"}
