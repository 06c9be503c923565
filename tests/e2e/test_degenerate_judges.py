"""Issue 15, done-when: the always-A, always-Tie and coin judges get no pass, with the baseline's reason,
when driven through the OpenAI-compatible wire format by a server that answers that way; a judge that
works passes on the same run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from judgebench import api
from judgebench.data.dataset import sample_variants_path
from judgebench.records.readiness_document import ReadinessEntry
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body


def _answer(request: SeenRequest) -> Reply:
    body = request.body
    model = body["model"]
    user = body["messages"][-1]["content"]
    if model == "always-a":
        winner = "A"
    elif model == "always-tie":
        winner = "Tie"
    else:  # a fair coin, fixed per prompt so reruns hit the cache
        winner = "A" if hashlib.sha256(user.encode()).digest()[0] % 2 else "B"
    return Reply(
        body=chat_body(json.dumps({"winner": winner, "confidence": 0.5, "reason": "-"}), model=model)
    )


@pytest.mark.slow
def test_degenerate_judges_over_the_wire_get_no_pass(tmp_path: Path) -> None:
    run = tmp_path / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=sample_variants_path()))
    models = [f"openai-compatible:{name}" for name in ("always-a", "always-tie", "coin")]
    with OpenAIServer(_answer) as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=30, max_retries=3, concurrency=8)
        )
        result = api.judge(run, api.JudgeRequest(models=models), options=options)
    assert all(o.missing == 0 for o in result.outcomes.values())
    readiness = api.report(run, api.ReportRequest(html=False)).readiness
    by_judge: dict[str, list[ReadinessEntry]] = {}
    for v in readiness.verdicts:
        by_judge.setdefault(v.judge, []).append(v)
    assert set(by_judge) == set(models)
    for judge, verdicts in by_judge.items():
        for v in verdicts:
            assert v.verdict != "pass", (judge, v)
            assert v.baseline == "fail", (judge, v)
    reasons = {judge: " ".join(" ".join(v.reasons) for v in vs) for judge, vs in by_judge.items()}
    assert 'answers "A"' in reasons["openai-compatible:always-a"]
    assert 'answers "Tie"' in reasons["openai-compatible:always-tie"]
    assert "position inconsistency" in reasons["openai-compatible:coin"]
    on_disk = json.loads((run / "readiness.json").read_text())
    assert on_disk["complete"] is True and len(on_disk["verdicts"]) == len(readiness.verdicts)
