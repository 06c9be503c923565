"""Issue 18: a whole judge stage with the structured-output template over the OpenAI wire format.

The server plays a chatty judge: held to a JSON schema it answers with exactly the schema's object (as
OpenAI's strict mode does); in plain JSON mode it wraps its verdict in prose with a long reason. The
run's records must show the schema that was sent, the replies must all be verdicts, and the replies'
recorded output tokens must cost a plan of the same design below the default template's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from judgebench import api
from judgebench.config.paths import configs_dir
from judgebench.data.dataset import sample_variants_path
from judgebench.records import Judgment
from judgebench.store.run_folder import read_jsonl
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body

SCHEMA_TEMPLATE = configs_dir() / "templates" / "judge_verdict_schema.toml"


def _chatty(request: SeenRequest) -> Reply:
    body = request.body
    user = body["messages"][-1]["content"]
    winner = "A" if hashlib.sha256(user.encode()).digest()[0] % 3 else "B"
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        assert schema["properties"]["winner"]["enum"] == ["A", "B", "Tie"]
        reply = {"winner": winner, "confidence": 0.75}
        assert set(reply) == set(schema["required"])
        text, tokens = json.dumps(reply), 14
    else:
        reason = "Both responses address the task; " * 8
        text = f'Here is my verdict: {{"winner": "{winner}", "confidence": 0.75, "reason": "{reason}"}}'
        tokens = 96
    return Reply(body=chat_body(text, model=body["model"], completion_tokens=tokens))


def test_a_structured_judge_stage_records_the_schema_and_its_short_replies_cost_less(tmp_path: Path) -> None:
    model = "openai-compatible:chatty"
    runs = {}
    with OpenAIServer(_chatty) as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=30, max_retries=2, concurrency=8)
        )
        for name, template in (("schema", SCHEMA_TEMPLATE), ("default", None)):
            run = tmp_path / name
            api.translate(run, api.TranslateRequest(dataset="sample", variants_file=sample_variants_path()))
            result = api.judge(run, api.JudgeRequest(models=[model], template_path=template), options=options)
            assert all(o.missing == 0 for o in result.outcomes.values())
            runs[name] = run
        asked = len(server.requests)
        again = api.judge(
            runs["schema"], api.JudgeRequest(models=[model], template_path=SCHEMA_TEMPLATE), options=options
        )
        assert len(server.requests) == asked and all(o.missing == 0 for o in again.outcomes.values())
    judged = list(read_jsonl(runs["schema"] / "judgments.jsonl", Judgment))
    assert judged and all(j.template == "judge-verdict-schema-v1" for j in judged)
    assert all(j.params["response_format"]["type"] == "json_schema" for j in judged)
    assert all(j.winner in {"A", "B"} and j.parse_error is None for j in judged)
    manifest = json.loads((runs["schema"] / "manifest.json").read_text())
    assert manifest["stages"]["judge"]["template"]["name"] == "judge-verdict-schema-v1"
    # each run's own replies cost the same design: 14 tokens a reply against 96
    plans = {
        name: api.plan_study(
            api.PlanRequest(
                models=[model], dataset="sample", sim_seeds=1, from_run=run, template_path=template
            )
        )
        for name, run, template in (
            ("schema", runs["schema"], SCHEMA_TEMPLATE),
            ("default", runs["default"], None),
        )
    }
    schema_cost, default_cost = (plans[n].templates[0].estimates[0] for n in ("schema", "default"))
    assert schema_cost.output_tokens == 14 * schema_cost.calls
    assert default_cost.output_tokens == 96 * default_cost.calls
    assert schema_cost.output_source == default_cost.output_source == f"the run's {len(judged)} judgments"
