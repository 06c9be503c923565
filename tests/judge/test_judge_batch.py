"""`judge --batch` at full LLMBar size against emulated OpenAI and Anthropic Batch APIs (official SDKs):
the same judgments as a live run, a restart while polling that resumes the same batch, and a
`--max-cost` budget that stops a run with everything done so far kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api import Execution
from judgebench.records import Judgment
from judgebench.store.run_folder import last_per_key, read_jsonl
from tests.natural_items import natural_items
from tests.servers.anthropic_batch_server import AnthropicBatchServer
from tests.servers.openai_batch_server import OpenAIBatchServer

N_ITEMS = 419


def _dataset(path: Path) -> Path:
    return natural_items(path, N_ITEMS)


def _verdicts(run: Path) -> dict[tuple[str, ...], tuple[str | None, str | None]]:
    records = last_per_key(read_jsonl(run / "judgments.jsonl", Judgment), key=lambda j: j.call_key())
    return {key[1:]: (j.verdict, j.raw) for key, j in records.items()}


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-judge")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-judge")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("server_cls", "spec"),
    [(OpenAIBatchServer, "openai:gpt-4.1-mini"), (AnthropicBatchServer, "anthropic:claude-haiku-4-5")],
)
def test_batch_run_equals_live_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server_cls: type, spec: str
) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    with server_cls() as server:
        base = server.base_url if hasattr(server, "base_url") else server.url
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=base, timeout=10, max_retries=2, concurrency=32)
        )
        api.judge(tmp_path / "live", api.JudgeRequest(models=[spec], dataset=str(data)), options=options)
        live_calls = server.live_calls()
        assert live_calls == 2 * N_ITEMS
        # a fresh cache: the batch run must really go through the Batch API
        monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "batch-cache"))
        result = api.judge(
            tmp_path / "batch",
            api.JudgeRequest(models=[spec], dataset=str(data)),
            options=options,
            execution=Execution(batch=True, poll_interval=0),
        )
        assert server.live_calls() == live_calls  # batch mode makes no live call
        assert len(server.created()) == 1
    assert result.outcomes[spec].missing == 0
    live, batch = _verdicts(tmp_path / "live"), _verdicts(tmp_path / "batch")
    assert len(batch) == 2 * N_ITEMS and batch == live
    records = list(read_jsonl(tmp_path / "batch" / "judgments.jsonl", Judgment))
    assert all(r.batch_id and r.custom_id == r.cache_key for r in records)
    assert all(r.cost_usd is not None for r in records)


@pytest.mark.slow
def test_killed_while_polling_then_resumed_submits_nothing_again(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    with OpenAIBatchServer() as server:
        server.hold.set()  # the batch stays in progress until released
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        cmd = [
            sys.executable,
            "-m",
            "judgebench",
            "judge",
            "--run",
            str(run),
            "--dataset",
            str(data),
            "--model",
            "openai:gpt-4.1-mini",
            "--base-url",
            server.base_url,
            "--batch",
            "--poll-interval",
            "0.05",
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            created = server.created()
            if created and server.polls[created[0]["id"]] >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        (batch,) = server.created()
        assert (run / "batches.json").exists()
        server.hold.clear()
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=10, max_retries=2)
        )
        result = api.judge(
            run,
            api.JudgeRequest(models=["openai:gpt-4.1-mini"]),
            options=options,
            execution=Execution(batch=True, poll_interval=0),
        )
        assert len(server.created()) == 1  # the known batch was polled to its end, none submitted again
        assert server.live_calls() == 0
    assert result.outcomes["openai:gpt-4.1-mini"].missing == 0
    records = _verdicts(run)
    assert len(records) == 2 * N_ITEMS
    assert all(j.batch_id == batch["id"] for j in read_jsonl(run / "judgments.jsonl", Judgment))


def test_max_cost_stops_the_run_and_keeps_what_was_done(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    with OpenAIBatchServer() as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=10, max_retries=1, concurrency=4)
        )
        # each live call reserves its worst case (900 output tokens) until its answer is priced
        first = api.judge(
            run,
            api.JudgeRequest(models=["openai:gpt-4.1-mini"], dataset=str(data), limit=50, max_cost=0.01),
            options=options,
        )
        outcome = first.outcomes["openai:gpt-4.1-mini"]
        paid = server.live_calls()
        assert 0 < outcome.verdicts + outcome.invalid < 100 and outcome.missing > 0
        assert outcome.cost_usd <= 0.01
        refused = [j for j in read_jsonl(run / "judgments.jsonl", Judgment) if j.verdict is None]
        assert refused and all("budget" in (j.error or "").lower() for j in refused)
        # a rerun with room in the budget pays only for what was refused
        second = api.judge(
            run, api.JudgeRequest(models=["openai:gpt-4.1-mini"], limit=50, max_cost=1.0), options=options
        )
        assert server.live_calls() - paid == outcome.missing
    assert second.outcomes["openai:gpt-4.1-mini"].missing == 0
    assert len(_verdicts(run)) == 100


def test_failed_batch_lines_can_run_live_instead(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    expired: set[str] = set()

    def fault(custom_id: str, attempt: int) -> str | None:
        # about a third of the first batch's lines expire
        if attempt == 1 and int(custom_id[:8], 16) % 3 == 0:
            expired.add(custom_id)
            return "expired"
        return None

    with OpenAIBatchServer(line_fault=fault) as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=10, max_retries=2)
        )
        result = api.judge(
            run,
            api.JudgeRequest(models=["openai:gpt-4.1-mini"], dataset=str(data), limit=30),
            options=options,
            execution=Execution(batch=True, poll_interval=0, batch_failed="live"),
        )
        assert len(server.created()) == 1  # no second batch: the expired lines ran live
        assert server.live_calls() == len(expired) > 0
    assert result.outcomes["openai:gpt-4.1-mini"].missing == 0
    assert len(_verdicts(run)) == 60


def test_write_batch_through_the_cli_on_a_fresh_run(tmp_path: Path) -> None:
    """README's vLLM path, step 1: the pending calls go to a batch file, nothing is called, exit 0."""
    from typer.testing import CliRunner

    from judgebench.cli import app

    out = tmp_path / "requests.jsonl"
    args = [
        "judge",
        "--run",
        str(tmp_path / "r"),
        "--dataset",
        "sample",
        "--model",
        "openai-compatible:Qwen/Qwen3-8B",
    ]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--write-batch", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 60 and {line["url"] for line in lines} == {"/v1/chat/completions"}
    assert "vllm run-batch" in result.stdout
    judgments = tmp_path / "r" / "judgments.jsonl"
    assert not judgments.exists() or judgments.read_text() == ""
