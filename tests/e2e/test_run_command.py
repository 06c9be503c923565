"""`judgebench run` end to end through the CLI: it asks before paying on every dataset, and a run with
failed calls finishes what it can, then exits 3 saying what failed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from tests.e2e.helpers import write_items
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, error_body

runner = CliRunner()


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv  # type: ignore[misc]


def test_run_on_the_bundled_sample_asks_before_paying(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-run")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    run = tmp_path / "r"
    result = runner.invoke(
        app, ["run", "--run", str(run), "--model", "openai:gpt-4.1-mini", "--limit", "1"], input="n\n"
    )
    assert result.exit_code != 0
    assert (
        "openai:gpt-4.1-mini" in result.stdout and "Go on?" in result.stdout
    )  # the estimate, then the question
    assert server.requests == [] and not run.exists()


def test_run_with_failed_calls_exits_3_and_names_them(server: OpenAIServer, tmp_path: Path) -> None:
    def failing(_req: SeenRequest) -> Reply:
        return Reply(status=500, body=error_body("boom", "server_error"))

    server.responder = failing
    run = tmp_path / "r"
    args = ["run", "--run", str(run), "--dataset", "sample", "--translate", "--limit", "2", "--yes"]
    args += ["--model", "openai-compatible:m", "--base-url", server.base_url, "--max-retries", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 3, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "2 item(s) could not be translated" in last
    assert "openai-compatible:m: " in last and "judge call(s) failed" in last
    assert (run / "translation_failures.jsonl").exists() and (run / "judgments.jsonl").exists()


def test_the_simulated_judge_is_refused_as_translator(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", 4)
    run = tmp_path / "r"
    result = runner.invoke(
        app, ["run", "--run", str(run), "--dataset", str(items), "--model", "sim:default", "--yes"]
    )
    assert result.exit_code == 1
    assert "cannot translate" in result.stderr and "--translator" in result.stderr
    assert not run.exists()


def test_run_dry_run_prices_the_whole_study_and_calls_nothing(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-run")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    run = tmp_path / "r"
    args = ["run", "--run", str(run), "--dataset", "sample", "--translate", "--limit", "3"]
    result = runner.invoke(app, [*args, "--model", "openai:gpt-4.1-mini", "--dry-run"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "openai:gpt-4.1-mini" in line]
    stages = {line.split("│")[1].strip(): int(line.split("│")[3].strip().replace(",", "")) for line in rows}
    # 3 items: one translation call each (zh and ls together) and 8 judge calls each
    # (3 conditions x 2 orders + 2 tie-probes)
    assert stages == {"translate": 3, "judge": 24}
    assert server.requests == [] and not run.exists()


def _judge_row(stdout: str, model: str) -> tuple[int, int]:
    """(calls, done) of the judge row for `model` in a dry-run table."""
    (line,) = [row for row in stdout.splitlines() if model in row and "judge" in row]
    cells = [c.strip() for c in line.split("│")]
    return int(cells[3].replace(",", "")), int(cells[4].replace(",", ""))


def test_run_dry_run_counts_what_is_still_to_judge(tmp_path: Path) -> None:
    """A run whose en is judged still has zh, ls and the tie-probes to pay for; a finished run none."""
    run = str(tmp_path / "r")
    first = runner.invoke(
        app, ["judge", "--run", run, "--dataset", "sample", "--model", "sim:default", "--limit", "3"]
    )
    assert first.exit_code == 0, first.output
    dry = runner.invoke(app, ["run", "--run", run, "--model", "sim:default", "--limit", "3", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert _judge_row(dry.stdout, "sim:default") == (18, 6)  # 24 calls for 3 items, 6 en done
    full = runner.invoke(app, ["run", "--run", run, "--model", "sim:default", "--limit", "3", "--yes"])
    assert full.exit_code == 0, full.output
    again = runner.invoke(app, ["run", "--run", run, "--model", "sim:default", "--limit", "3", "--dry-run"])
    assert _judge_row(again.stdout, "sim:default") == (0, 24)
