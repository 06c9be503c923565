"""Issue 26, startup: the slow libraries load where they are used, not with the package.

matplotlib (0.7 s) loads where a figure is drawn, scipy.stats and statsmodels (about 1 s) where a
statistic is computed, each provider SDK and local runtime where a call is made. Two checks: no
module of the package imports them at module level (read from the source), and a fresh interpreter
that imports `judgebench.api` has none of them in sys.modules (while one that computes a statistic
or draws a figure has). Everything else is a plain import: the one lazy seam is the CLI's, whose
commands import the library inside their functions (tests/cli/test_startup.py). Timings are
scripts/bench_startup.py's, never a test's."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.architecture.imports import ALL, SRC, imports_of

DEFERRED = (
    "matplotlib",
    "scipy",
    "statsmodels",
    "openai",
    "anthropic",
    "google.genai",
    "torch",
    "llama_cpp",
    "xllamacpp",
    "tiktoken",
    "huggingface_hub",
)
# and what `import judgebench.api` does not load either: httpx (0.1 s, rich and pygments with it) loads
# where something is downloaded (data/); the local model's engine, which needs it, loads with the model
NOT_AT_API_IMPORT = (*DEFERRED, "httpx")


def _is(module: str, library: str) -> bool:
    return module == library or module.startswith(library + ".")


def _module_level(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, name) of every module-level import outside `if TYPE_CHECKING:`; a `from a import b`
    counts as both a and a.b (`from google import genai` is google.genai)."""
    type_only = {imp.line for imp in imports_of(module, path) if imp.type_only or imp.in_function}
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if getattr(node, "lineno", None) in type_only:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def test_slow_libraries_are_imported_only_inside_functions() -> None:
    bad = [
        f"{module}:{line} imports {name} at module level"
        for module, path in ALL.items()
        for line, name in _module_level(module, path)
        if any(_is(name, lib) for lib in DEFERRED)
    ]
    assert not bad, "\n".join(bad)


def _printed_by(code: str) -> str:
    """What a fresh interpreter running `code` prints."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    printed = _printed_by(f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))")
    return set(json.loads(printed.splitlines()[-1]))


def _deferred_in(modules: set[str]) -> list[str]:
    return sorted(lib for lib in NOT_AT_API_IMPORT if any(_is(m, lib) for m in modules))


def test_importing_the_api_loads_no_slow_library() -> None:
    """`import judgebench.api` imports every stage (plain imports) and the data stack with them, but
    none of the slow libraries, which load with a statistic, a figure or a call."""
    modules = _loaded_after("import judgebench.api")
    assert "judgebench.api.report" in modules and "judgebench.report.plots" in modules
    assert {"pandas", "pyarrow", "pydantic"} <= modules  # the other side: the probe sees a library
    assert _deferred_in(modules) == []


def test_a_stage_function_keeps_its_name_over_its_module() -> None:
    """`report`, `judge`, `bbe` and `translate` name a function and the submodule defining it: loading
    the submodule first (as run_pipeline does) leaves the package's name the function."""
    stages = ("report", "judge", "bbe", "translate")
    shown = _printed_by(
        "import inspect, judgebench.api.report, judgebench.api.judge, judgebench.api.bbe\n"
        "import judgebench.api.translate\nimport judgebench.api as api\n"
        "from judgebench.api import report, judge, bbe, translate\n"
        f"print(*[inspect.isfunction(getattr(api, n)) and getattr(api, n) is eval(n) for n in {stages!r}])"
    )
    assert shown.split() == ["True"] * len(stages)


def test_a_statistic_or_a_figure_loads_its_library() -> None:
    """The other side: the libraries are loaded by the work that needs them, so the check above
    sees them when they are there."""
    stat = _loaded_after("import judgebench.api\nfrom judgebench.analysis.stats import wilson\nwilson(3, 10)")
    assert _deferred_in(stat) == ["scipy", "statsmodels"]
    figure = _loaded_after(
        "import judgebench.api\nfrom judgebench.report import plots\nplots.png(plots.figure(2.0, 1.0))"
    )
    assert _deferred_in(figure) == ["matplotlib"]


def test_the_source_rule_sees_a_module_level_import(tmp_path: Path) -> None:
    """The rule's reader tells a module-level import from one inside a function or for the checker."""
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nimport scipy.stats\nfrom google import genai\n"
        "if TYPE_CHECKING:\n    import openai\n\n\ndef f():\n    import matplotlib\n",
        encoding="utf-8",
    )
    found = {name for _, name in _module_level("judgebench.m", path)}
    assert found == {"typing", "typing.TYPE_CHECKING", "scipy.stats", "google", "google.genai"}
