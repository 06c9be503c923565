"""Issue 41 (third hostile pass), the classes about files: a last record without its newline kept,
not cut and paid again (2). Each through the real path: the CLI or api on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.records import Judgment
from judgebench.rundir import JUDGMENTS, read_jsonl
from tests.e2e.helpers import FAST_JUDGE, DeterministicJudge, private_configs, write_items
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, error_body

runner = CliRunner()


@pytest.fixture(autouse=True)
def _configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(private_configs(tmp_path / "configs", concurrency=1)))
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test-0123456789")


def _judge(run: Path, items: Path, url: str) -> Any:
    args = ["judge", "--run", str(run), "--dataset", str(items), "--model", FAST_JUDGE, "--base-url", url]
    result = runner.invoke(app, [*args, "--max-retries", "0", "--concurrency", "1"])
    out = (result.stdout or "") + (result.stderr or "")
    assert "Traceback" not in out, out
    return result


# --- 2. a complete last record without its newline ------------------------------------------------


def test_a_last_record_without_its_newline_is_kept_not_cut_and_paid_again(tmp_path: Path) -> None:
    """Before: the next append cut the record (a kill mid-write looked the same), so the resume
    listed it as missing and paid for it again. Now the tail repair adds the newline instead: a
    record that parses and validates is whole (a writer's line is its JSON then the newline)."""
    items = write_items(tmp_path / "items.jsonl", 6)
    run = tmp_path / "run"
    judge = DeterministicJudge()

    def first_item_fails(request: SeenRequest) -> Reply:
        if "Task 0:" in str(request.body):
            return Reply(status=400, body=error_body("refused"))
        return judge(request)

    with OpenAIServer(first_item_fails) as server:
        _judge(run, items, server.base_url)
    path = run / JUDGMENTS
    data = path.read_bytes()
    assert data.endswith(b"\n")
    path.write_bytes(data[:-1])  # as an editor or pandas.to_json(lines=True) leaves it
    last = Judgment.model_validate_json(data.splitlines()[-1])
    assert last.verdict is not None  # a paid answer

    with OpenAIServer(judge) as server:  # the rerun retries the two failed calls: it appends
        second = _judge(run, items, server.base_url)
        assert second.exit_code == 0, second.stderr
        _judge(run, items, server.base_url)
    assert judge.repeats() == {}  # no answer paid twice
    assert path.read_bytes().startswith(data)  # the record kept whole, its newline added
    assert last.call_key() in {j.call_key() for j in read_jsonl(path, Judgment) if j.verdict is not None}
