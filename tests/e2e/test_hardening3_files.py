"""Issue 41 (third hostile pass), the classes about files and outside text: a last record without its
newline kept, not cut and paid again (2); linear time on hostile Markdown (5). Each through the real
path: the CLI or api on real files."""

from __future__ import annotations

import json
import subprocess
import sys
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


# --- 5. hostile Markdown in the formatting probe ---------------------------------------------------

KIB64 = 1 << 16
HOSTILE_MARKDOWN = {  # each 64 KB on one line, none of it markup that closes
    "unclosed links": "[a](" * (KIB64 // 4),
    "unclosed images": "![a](" * (KIB64 // 5),
    "bold never closed": "a **b" * (KIB64 // 5),
    "strike never closed": "a ~~b" * (KIB64 // 5),
    "underscores never closed": "a __b" * (KIB64 // 5),
    "a line of spaces": " " * KIB64 + "x",
    "opening brackets": "[" * KIB64,
}


def test_the_formatting_probe_takes_linear_time_on_hostile_markdown(tmp_path: Path) -> None:
    """Before: `judge --probes format` over an answer of 16 KB of `[a](` never finished (each try of
    the link pattern ran to the line's end with a choice at every character: cubic), and `a **b`
    repeated was quadratic. Now each pattern is linear: 64 KB of each finishes (the generous bound
    is a subprocess timeout, not a speed claim) with the text unchanged, as no markup in it closes;
    the link planted after the hostile run is still stripped."""
    rows = [
        {
            "id": f"q{i}",
            "subset": "Natural",
            "instruction": f"Task {i}",
            "output_1": "a **good** answer, see [the docs](https://x.org)",
            "output_2": text,
            "label": 1,
        }
        for i, text in enumerate(HOSTILE_MARKDOWN.values())
    ]
    rows[0]["output_1"] = HOSTILE_MARKDOWN["unclosed links"] + " see [the docs](https://x.org)"
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp_path / "run"
    cli = [sys.executable, "-c", "from judgebench.cli import main; main()", "judge", "--run", str(run)]
    judged = subprocess.run(
        [*cli, "--dataset", str(items), "--model", "sim:probe-biased", "--probes", "format"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert judged.returncode == 0, judged.stderr
    variants = map(json.loads, (run / "variants.jsonl").read_text(encoding="utf-8").splitlines())
    formatted = {v["item_id"]: v for v in variants if v["condition"] == "format"}
    assert [formatted[f"q{i}"]["output_2"] for i in range(len(rows))] == list(HOSTILE_MARKDOWN.values())
    assert formatted["q0"]["output_1"] == HOSTILE_MARKDOWN["unclosed links"] + " see the docs (https://x.org)"
    assert formatted["q1"]["output_1"] == "a good answer, see the docs (https://x.org)"
