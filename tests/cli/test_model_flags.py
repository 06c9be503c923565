"""The shared model flags reach the library: each command lists them once, in its signature, and
`options.call_options_from` picks them by name (a flag missing from CALL_FLAGS would be dropped)."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

from typer.testing import CliRunner

from judgebench import api
from judgebench.cli import app, bbe_cmd, judge_cmd, run_cmd, translate_cmd
from judgebench.cli import shared_options as options
from judgebench.data.dataset import sample_variants_path
from tests.servers.openai_server import OpenAIServer

COMMANDS = {
    "judge": judge_cmd.judge_command,
    "run": run_cmd.run_command,
    "bbe": bbe_cmd.bbe_command,
    "translate": translate_cmd.translate_command,
}


def test_every_model_flag_a_command_declares_is_one_call_options_from_picks() -> None:
    settings = set(api.SettingsOverrides.model_fields)
    fields = {f.name for f in dataclasses.fields(api.CallOptions)} - {"settings"} | settings | {"no_cache"}
    assert set(options.CALL_FLAGS) <= fields
    for name, command in COMMANDS.items():
        declared = set(inspect.signature(command).parameters) & fields
        assert declared >= {"base_url", "timeout", "max_retries", "concurrency", "rpm", "no_cache"}, name
        assert declared <= set(options.CALL_FLAGS), (name, declared - set(options.CALL_FLAGS))


def test_judge_flags_travel_to_the_calls(tmp_path: Path) -> None:
    """--base-url reaches the server, --max-answer-chars cuts the stored answer, --no-cache asks again."""
    run = tmp_path / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=sample_variants_path(), limit=2))
    reply = json.dumps({"winner": "A", "confidence": 0.9, "reason": "x" * 200})
    with OpenAIServer(text=reply) as server:
        args = ["judge", "--run", str(run), "--model", "openai-compatible:flags", "--conditions", "en"]
        args += ["--base-url", server.base_url, "--max-answer-chars", "40", "--timeout", "9"]
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 0, out.output
        first = len(server.requests)
        judgments = run / "judgments.jsonl"
        kept = judgments.read_text()
        judgments.unlink()  # judged again from scratch: the response cache answers every call
        assert CliRunner().invoke(app, args).exit_code == 0
        cached = len(server.requests)
        judgments.unlink()
        fresh = CliRunner().invoke(app, [*args, "--no-cache"])  # ... unless it is switched off
        assert fresh.exit_code == 0, fresh.output
        asked_again = len(server.requests) - cached
    assert first > 0 and cached == first and asked_again == first
    lines = [json.loads(x) for x in kept.splitlines()]
    assert lines and all(j["raw_cap"] == 40 and len(j["raw"]) <= 40 for j in lines)
