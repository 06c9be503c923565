"""The layer rules catch what they are there to catch: each is run on planted modules that break it
(and on one that keeps it), through the same functions that check the real package."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.imports import Import, imports_of
from tests.architecture.test_layers import below_api_problems, layer_problems, never_problems, render_problems

PLANTED = {
    # nothing below api imports api
    "judgebench.report.planted": "from judgebench.api import judge\n",
    # analysis and bbe import neither judge nor execution (nor reach them through another room)
    "judgebench.analysis.planted": "from judgebench.judge.parse import parse_verdict\n",
    "judgebench.bbe.planted": "import judgebench.execution\n",
    # only the CLI renders
    "judgebench.execution.planted": "from rich.console import Console\n",
    "judgebench.costing.planted": "def note() -> None:\n    print('spent')\n",
}
CLEAN = {"judgebench.analysis.clean": "from judgebench.records import Judgment\n\nX = 1\n"}


def _imports(tmp_path: Path, sources: dict[str, str]) -> list[Import]:
    found: list[Import] = []
    for name, source in sources.items():
        path = tmp_path / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        found += imports_of(name, path)
    return found


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_each_planted_module_breaks_a_rule(tmp_path: Path, name: str) -> None:
    imports = _imports(tmp_path, {name: PLANTED[name]})
    problems = (
        layer_problems(imports)
        + below_api_problems(imports)
        + never_problems(imports)
        + render_problems(imports, {name: PLANTED[name]})
    )
    assert any(name.rsplit(".", 2)[1] in p or name in p for p in problems), problems


def test_the_rules_name_what_they_catch(tmp_path: Path) -> None:
    imports = _imports(tmp_path, PLANTED)
    assert below_api_problems(imports) == ["judgebench.report.planted:1"]
    assert sorted(never_problems(imports)) == [
        "analysis reaches ['judge'] through its imports",
        "bbe reaches ['execution'] through its imports",
    ]
    rendered = render_problems(imports, PLANTED)
    assert "judgebench.execution.planted:1 imports rich.console" in rendered
    assert "judgebench.costing.planted:2 calls print()" in rendered


def test_a_module_that_keeps_the_rules_passes_them(tmp_path: Path) -> None:
    imports = _imports(tmp_path, CLEAN)
    assert imports
    assert not layer_problems(imports) + below_api_problems(imports) + never_problems(imports)
    assert not render_problems(imports, CLEAN)
