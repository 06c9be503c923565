"""Each stage takes its typed request (issue 25): no stage function takes loose keyword fields, and a
misspelt option is refused by the request model instead of passing silently."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pydantic import ValidationError

from judgebench import api

STAGES = (
    api.translate,
    api.judge,
    api.report,
    api.bbe,
    api.bbe_estimate,
    api.run_pipeline,
    api.plan_study,
    api.run_selftest,
    api.import_llmbar_results,
    api.show_dataset,
)


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
