"""Each stage takes its typed request (issue 25): no stage function takes loose keyword fields, and a
misspelt option is refused by the request model instead of passing silently."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from pydantic import ValidationError

from judgebench import api

# every function the library exports (a stage added later is checked without being listed here)
STAGES = tuple(f for f in (getattr(api, name) for name in api.__all__) if inspect.isfunction(f))
SRC = Path(__file__).resolve().parents[1] / "src" / "judgebench"
# a `**kwargs` that is no request: matplotlib's line style, passed through as it is
PASS_THROUGH = {("report/plots.py", "line_handle")}


def loose_keywords(source: str, where: str) -> list[str]:
    """Each public function in `source` that takes `**name` (a module's private helper may pass
    keywords on to a record model, which refuses an unknown one)."""
    return [
        f"{where}:{node.lineno} {node.name}(**{node.args.kwarg.arg})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.args.kwarg is not None
        and not node.name.startswith("_")
        and (where, node.name) not in PASS_THROUGH
    ]


def test_the_stages_are_found() -> None:
    names = {f.__name__ for f in STAGES}
    assert {"translate", "judge", "report", "bbe", "run_pipeline", "plan_study", "run_selftest"} <= names


@pytest.mark.parametrize("stage", STAGES, ids=lambda f: f.__name__)
def test_no_stage_takes_loose_keyword_fields(stage: object) -> None:
    assert callable(stage)
    kinds = {p.kind for p in inspect.signature(stage).parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds


def test_a_keyword_field_is_no_longer_a_way_round_the_request(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="models"):
        api.judge(tmp_path / "run", models=["sim:default"])  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="modles"):
        api.JudgeRequest(modles=["sim:default"])  # type: ignore[call-arg]
    assert not (tmp_path / "run").exists()


def test_no_function_below_the_cli_takes_loose_keyword_fields() -> None:
    """Not the stages only: nothing the library calls on the way down takes `**fields` either."""
    found = [
        problem
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "cli"
        for problem in loose_keywords(path.read_text(encoding="utf-8"), path.relative_to(SRC).as_posix())
    ]
    assert not found, found


def test_a_planted_keyword_splat_is_found() -> None:
    planted = "def judge(run: str, **fields: Any) -> None: ...\nasync def plan(**kw: int) -> None: ..."
    assert len(loose_keywords(planted, "planted.py")) == 2
    assert loose_keywords("def judge(run: str, request: JudgeRequest) -> None: ...", "clean.py") == []
    assert loose_keywords("def _record(m: str, **extra: Any) -> Record: ...", "private.py") == []
