"""The package's import graph, read from the source with `ast` (nothing is imported)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "judgebench"


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. judgebench.api.judge
    target: str  # the imported module (or the module a name is imported from)
    line: int
    in_function: bool
    type_only: bool  # under `if TYPE_CHECKING:`


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(name, alias.name, child.lineno, in_function, type_only))
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(name, is_package, child)
                for alias in child.names:
                    # `from judgebench.cli import render` imports a module; `from x import y` a name
                    sub = f"{target}.{alias.name}"
                    found.append(
                        Import(name, sub if sub in ALL else target, child.lineno, in_function, type_only)
                    )
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), in_function, True)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), in_function, type_only)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, True, type_only)
            else:
                visit(child, in_function, type_only)

    visit(tree, False, False)
    return found


ALL = modules()


def all_imports() -> list[Import]:
    return [imp for name, path in ALL.items() for imp in imports_of(name, path)]


def room(module: str) -> str:
    """The top-level room of a module: judgebench.api.judge -> api, judgebench.store.run_folder -> store."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def internal(imp: Import) -> bool:
    return imp.target == PACKAGE or imp.target.startswith(PACKAGE + ".")
