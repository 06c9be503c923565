"""The Study (api/study.py): its fields declared once for every stage, `--conditions` parsed in one
place, and the same Study whether it comes from the flags or from the run's manifest."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api.study import Study
from judgebench.conditions import parse_names
from judgebench.data.dataset import sample_variants_path
from judgebench.errors import ConfigError
from judgebench.store.run_folder import RunDir

SRC = Path(api.__file__).resolve().parents[1]
CLI = SRC / "cli"


def test_one_parser_reads_a_conditions_value() -> None:
    assert parse_names(" en, zh ,ls,zh,") == ["en", "zh", "ls"]
    assert parse_names(["zh", "ls"]) == ["zh", "ls"]
    assert parse_names(None) is None
    with pytest.raises(ConfigError, match="names no condition"):
        parse_names(" , ")


def test_every_stage_request_reads_conditions_the_same_way() -> None:
    """A comma string and a list give the same request, in every stage that takes conditions."""
    for request in (api.JudgeRequest, api.TranslateRequest, api.PipelineRequest, api.PlanRequest):
        assert request(conditions="en, zh,ls").conditions == ["en", "zh", "ls"], request
        assert request(conditions=["en", "zh", "ls"]) == request(conditions="en,zh,ls"), request
        with pytest.raises(ValueError, match="names no condition"):
            request(conditions=",")
    # the stages that start a study from scratch default to the sample's zh and ls
    assert api.PipelineRequest().conditions == api.PlanRequest().conditions == ["zh", "ls"]
    assert api.PipelineRequest().dataset == api.PlanRequest().dataset == "sample"
    assert api.JudgeRequest().conditions is None and api.TranslateRequest().conditions is None


def test_the_study_fields_are_declared_once() -> None:
    """Each stage request extends the Study: none declares a Study field again, other than to state
    its own default (`plan` and `run` start from the sample), with the Study's very type."""
    for request in (api.JudgeRequest, api.PipelineRequest, api.PlanRequest, api.TranslateRequest):
        assert issubclass(request, api.study.StudyData)
        again = set(request.__annotations__) & set(Study.model_fields)
        assert again <= {"dataset", "conditions"}, (request, again)
        for name in again:
            declared = {**api.study.StudyData.__annotations__, **Study.__annotations__}
            assert request.__annotations__[name] == declared[name], (request, name)


def _comma_splits_of_conditions(path: Path) -> list[int]:
    """Lines of `path` that split a comma string whose name says it holds conditions."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "split" or not node.args:
            continue
        arg = node.args[0]
        if (
            isinstance(arg, ast.Constant)
            and arg.value == ","
            and "condition" in ast.unparse(node.func.value).lower()
        ):
            lines.append(node.lineno)
    return lines


ELSEWHERE: set[str] = set()


def test_conditions_are_parsed_in_one_place() -> None:
    found = {
        str(path.relative_to(SRC)): lines
        for path in SRC.rglob("*.py")
        if (lines := _comma_splits_of_conditions(path))
    }
    # conditions.parse_names is the one (it splits `value`); every other place calls it
    assert set(found) - ELSEWHERE == set(), found


def _declarations(flag: str) -> list[str]:
    pattern = re.compile(r'typer\.Option\(\s*"' + re.escape(flag) + '"')
    return [str(p.relative_to(SRC)) for p in CLI.glob("*.py") for _ in pattern.finditer(p.read_text())]


@pytest.mark.parametrize("flag", ["--concurrency", "--conditions", "--limit"])
def test_each_shared_setting_is_declared_once(flag: str) -> None:
    assert _declarations(flag) == ["cli/shared_options.py"]


def test_the_flags_and_the_manifest_give_the_same_study(tmp_path: Path) -> None:
    """A run translated and judged from a Study records a manifest that gives that Study back."""
    flags = Study(dataset="sample", limit=6, conditions="en,zh,ls", models=["sim:selftest-unbiased"])
    run = tmp_path / "run"
    api.translate(run, flags.request(api.TranslateRequest, {"variants_file": sample_variants_path()}))
    api.judge(run, flags.request(api.JudgeRequest), options=api.CallOptions(use_cache=False))
    assert Study.from_manifest(RunDir(run).manifest()) == flags
    # a different study is not the run's
    assert Study.from_manifest(RunDir(run).manifest()) != flags.model_copy(
        update={"conditions": ["en", "zh"]}
    )
