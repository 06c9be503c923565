"""Issue 29 end to end, as a user would meet it: a server that rejects the key, and the other defect
classes of the second hostile pass. Each ends with no traceback and one clear message, nothing paid
for lost, nothing paid twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.models.client import KEY_REJECTIONS_TO_STOP
from judgebench.records import Judgment
from judgebench.rundir import JUDGMENTS, read_jsonl
from tests.e2e.helpers import FAST_JUDGE, DeterministicJudge, private_configs, write_items
from tests.servers.base import reject_key
from tests.servers.openai_server import OpenAIServer

runner = CliRunner()
CONCURRENCY = 2


@pytest.fixture(autouse=True)
def _configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "JUDGEBENCH_CONFIGS", str(private_configs(tmp_path / "configs", concurrency=CONCURRENCY))
    )
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test-REJECTED-0123456789")


def _judge(run: Path, items: Path, url: str, *extra: str) -> Any:
    args = ["judge", "--run", str(run), "--dataset", str(items), "--model", FAST_JUDGE, "--base-url", url]
    return runner.invoke(app, [*args, "--max-retries", "1", *extra])


def _no_traceback(result: Any) -> None:
    out = (result.stdout or "") + (result.stderr or "")
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def _verdicts(run: Path) -> dict[tuple[str, ...], str | None]:
    out: dict[tuple[str, ...], str | None] = {}
    for j in read_jsonl(run / JUDGMENTS, Judgment):
        out[j.call_key()] = j.verdict
    return out


# --- 7. a rejected key stops the stage ------------------------------------------------------------


def test_a_rejected_key_stops_the_stage_and_a_rerun_resumes(tmp_path: Path) -> None:
    """Before: against a server answering 401 to everything, every planned call was sent and 10
    failures listed without "and N more". Now: a few calls, one message naming the provider and the
    key variable, a non-zero exit; a rerun with a working key judges everything, once."""
    items = write_items(tmp_path / "items.jsonl", 30)
    run = tmp_path / "run"
    with OpenAIServer(reject_key) as bad:
        first = _judge(run, items, bad.base_url)
        sent = len(bad.chat_requests())
    _no_traceback(first)
    assert first.exit_code != 0
    assert sent <= KEY_REJECTIONS_TO_STOP + CONCURRENCY - 1, sent
    err = first.stderr
    assert err.count("stopped:") == 1 and "on 3 calls in a row" in err, err
    assert "openai-compatible" in err and "OPENAI_COMPATIBLE_API_KEY" in err
    assert "60 call(s) failed" in err and "... and 50 more" in err
    assert "rerun the command" in err

    judge = DeterministicJudge()
    with OpenAIServer(judge) as good:
        second = _judge(run, items, good.base_url)
        paid = good.successes
    _no_traceback(second)
    assert second.exit_code == 0, second.stderr
    verdicts = _verdicts(run)
    assert len(verdicts) == 60 and all(v is not None for v in verdicts.values())
    assert paid == 60  # each planned call paid once


def test_one_rejection_among_answers_does_not_stop_the_stage(tmp_path: Path) -> None:
    """The ordinary case: a 401 here and there (a key rotated mid-run, a proxy's hiccup) between
    answers is a failed call, not a stop: the streak must be consecutive."""
    items = write_items(tmp_path / "items.jsonl", 10)
    judge = DeterministicJudge()
    seen = {"n": 0}

    def flaky(request: Any) -> Any:
        seen["n"] += 1
        return reject_key(request) if seen["n"] % 3 == 0 else judge(request)

    run = tmp_path / "run"
    with OpenAIServer(flaky) as server:
        result = _judge(run, items, server.base_url, "--concurrency", "1")
        sent = len(server.chat_requests())
    _no_traceback(result)
    assert sent == 20  # every planned call was sent
    assert "stopped:" not in result.stderr
    assert "call(s) failed" in result.stderr
