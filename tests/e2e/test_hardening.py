"""Issue 17 end to end, as a user would meet it: a hostile 127.0.0.1 server, two processes on one
run, a full cache, a careless dataset. Each ends with no traceback, a one-line reason and the
documented exit code, nothing lost, nothing paid twice, no secret in any file or output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.cli.exits import ExitCode
from judgebench.models.cache import ResponseCache
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, read_jsonl
from tests.e2e.helpers import FAST_JUDGE, DeterministicJudge, private_configs, write_items
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body, error_body

runner = CliRunner()
ITEMS = 5
PLANNED = ITEMS * 2  # en only: both orders (no translated condition, so no tie-probes)


@pytest.fixture(autouse=True)
def _configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(private_configs(tmp_path / "configs", concurrency=2)))


def _judge(run: Path, items: Path, url: str, *extra: str) -> Any:
    args = ["judge", "--run", str(run), "--dataset", str(items), "--model", FAST_JUDGE, "--base-url", url]
    return runner.invoke(app, [*args, "--max-retries", "1", *extra])


def _records(run: Path) -> list[Judgment]:
    return list(read_jsonl(run / JUDGMENTS, Judgment))


def _no_traceback(result: Any) -> None:
    out = (result.stdout or "") + (result.stderr or "")
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


# --- 1. lone surrogates -----------------------------------------------------------------------------


def _surrogate_reply(request: SeenRequest) -> Reply:
    return Reply(body=chat_body('{"winner": "A", "confidence": 0.9, "reason": "bad byte \ud800 here"}'))


def test_surrogate_answers_reach_judgments_and_a_rerun_pays_nothing(tmp_path: Path) -> None:
    """Before: PydanticSerializationError at the cache write, 0 judgments, every rerun paid again."""
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    with OpenAIServer(_surrogate_reply) as server:
        first = _judge(tmp_path / "run", items, server.base_url)
        _no_traceback(first)
        assert first.exit_code == ExitCode.OK, first.stderr
        paid = server.successes
        again = _judge(tmp_path / "run2", items, server.base_url)  # a fresh run folder: all from the store
        assert again.exit_code == ExitCode.OK, again.stderr
        assert server.successes == paid
    records = _records(tmp_path / "run")
    assert len(records) == paid and all(r.verdict is not None for r in records)
    assert all("\ufffd" in (r.raw or "") for r in records)
    assert all(r.from_cache for r in _records(tmp_path / "run2"))


def test_surrogate_in_a_dataset_or_variants_file_is_one_line(tmp_path: Path) -> None:
    """Before: a UnicodeEncodeError traceback. Now: exit 1, one line naming the file and the line."""
    good = {"id": "a", "subset": "Natural", "instruction": "hi", "output_1": "x", "output_2": "y", "label": 1}
    bad = dict(good, id="b", output_2="y \ud800")
    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["data", "show", str(data)])
    _no_traceback(result)
    assert result.exit_code == ExitCode.ERROR
    assert "items.jsonl, line 2" in result.stderr and "lone surrogate" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps(good) + "\n", encoding="utf-8")
    variants = tmp_path / "variants.jsonl"
    line = {"item_id": "a", "condition": "zh", "instruction": "你好 \udc00", "output_1": "x", "output_2": "y"}
    variants.write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = runner.invoke(
        app,
        ["translate", "--run", str(tmp_path / "run"), "--dataset", str(clean), "--variants", str(variants)],
    )
    assert result.exit_code == ExitCode.ERROR
    assert "variants.jsonl, line 1" in result.stderr and "lone surrogate" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- 7. a full cache disk -----------------------------------------------------------------------------


def test_full_cache_disk_says_so_once_and_loses_no_paid_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: an 89-line ExceptionGroup ending in 'database or disk is full', 0 judgments. Now: every
    answer in judgments.jsonl, one warning, exit 0."""
    real_init = ResponseCache.__init__

    def full_store(self: ResponseCache, path: str | Path) -> None:
        real_init(self, path)
        (pages,) = self._conn.execute("PRAGMA page_count").fetchone()
        self._conn.execute(f"PRAGMA max_page_count={pages}")  # SQLITE_FULL on the next page, as a full tmpfs

    monkeypatch.setattr(ResponseCache, "__init__", full_store)
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    answer = json.dumps({"winner": "A", "confidence": 0.5, "reason": "x" * 6000})
    with OpenAIServer(lambda _r: Reply(body=chat_body(answer))) as server:
        result = _judge(tmp_path / "run", items, server.base_url)
        paid = server.successes
    _no_traceback(result)
    assert result.exit_code == ExitCode.OK, result.stderr
    assert result.stderr.count("cannot be used") == 1 and "full" in result.stderr
    records = _records(tmp_path / "run")
    assert len(records) == paid == PLANNED and all(r.verdict is not None for r in records)


# --- 3. two writers on one run ------------------------------------------------------------------------


def _judge_process(run: Path, items: Path, url: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "from judgebench.cli import main; main()", "judge", "--run", str(run)]
    command += ["--dataset", str(items), "--model", FAST_JUDGE, "--base-url", url, "--concurrency", "1"]
    return subprocess.Popen(command, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for_lock(run: Path, proc: subprocess.Popen[bytes]) -> None:
    lock = run / ".judge.lock"
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip() == str(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, "the first judge never took the lock"
        time.sleep(0.01)


@pytest.mark.timeout(180)
def test_second_judge_is_refused_naming_the_holder_then_waits_with_wait_lock(tmp_path: Path) -> None:
    """Before: two judges on one run paid for 56 of 80 calls twice. Now: the second is refused with
    the holder's pid, or waits with --wait-lock and then pays for nothing."""
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    run = tmp_path / "run"
    with OpenAIServer(DeterministicJudge(delay=0.15)) as server:
        proc = _judge_process(run, items, server.base_url)
        _wait_for_lock(run, proc)
        refused = _judge(run, items, server.base_url)
        assert refused.exit_code == ExitCode.ERROR
        assert f"pid {proc.pid}" in refused.stderr and "--wait-lock" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        waited = _judge(run, items, server.base_url, "--wait-lock")
        assert proc.wait(timeout=120) == 0
        assert waited.exit_code == ExitCode.OK, waited.stderr
        assert server.successes == PLANNED  # nothing paid twice
    assert len({r.call_key() for r in _records(run)}) == PLANNED


@pytest.mark.timeout(180)
def test_a_lock_left_by_a_killed_judge_is_taken_over(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    run = tmp_path / "run"
    with OpenAIServer(DeterministicJudge(delay=0.15)) as server:
        proc = _judge_process(run, items, server.base_url)
        _wait_for_lock(run, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert (run / ".judge.lock").read_text().strip() == str(proc.pid)  # the stale lock file stays
        result = _judge(run, items, server.base_url)
    assert result.exit_code == ExitCode.OK, result.stderr
    assert len({r.call_key() for r in _records(run) if r.verdict}) == PLANNED


def test_a_torn_line_mid_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """Before: a half line left by a killed writer, with another's lines after it, made `report` and
    `judge` refuse the run ('unreadable record'). Now both go on, with a warning; nothing is lost."""
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    run = tmp_path / "run"
    with OpenAIServer(DeterministicJudge()) as server:
        assert _judge(run, items, server.base_url).exit_code == ExitCode.OK
        lines = (run / JUDGMENTS).read_text(encoding="utf-8").splitlines(keepends=True)
        torn = lines[0][: len(lines[0]) // 2]
        # writer 1 died mid-line; writer 2's record was appended onto the half line, more lines after
        (run / JUDGMENTS).write_text(torn + "".join(lines), encoding="utf-8")
        rerun = _judge(run, items, server.base_url)
        paid = server.successes
    assert rerun.exit_code == ExitCode.OK, rerun.stderr
    assert "torn line" in rerun.stderr and paid == PLANNED  # the salvaged record: nothing re-paid
    # issue 29: the rerun (the file's writer) repaired it: valid JSONL again, the fragment kept aside
    assert "repaired 1 torn line(s)" in rerun.stderr
    for line in (run / JUDGMENTS).read_text(encoding="utf-8").splitlines():
        json.loads(line)
    assert (run / f"{JUDGMENTS}.torn").read_text(encoding="utf-8") == torn + "\n"
    report = runner.invoke(app, ["report", "--run", str(run)])
    assert report.exit_code == ExitCode.OK, report.stderr
    assert "torn line" not in report.stderr


# --- 4 and 5. credentials in --base-url, a key cut in half ------------------------------------------


SECRET = "tok3n-SECRET-0123456789"
KEY = "sk-test-CUTKEY-0123456789abcdefghij"


def test_no_credential_reaches_a_file_or_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: `user:token@` stored in clear in the manifest and printed in the 401 hint; an error text
    cut at 300 characters before masking left 20 of 21 key characters in stderr and judgments."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    run = tmp_path / "run"

    def hostile(request: SeenRequest) -> Reply:
        auth = request.headers.get("authorization", "")
        user = str(request.body["messages"][-1]["content"]) if isinstance(request.body, dict) else ""
        if "task 1 " in user:
            return Reply(status=401, body=error_body(f"bad key {auth}"))
        # the key straddles the old 300-character cut
        return Reply(
            status=400, body=error_body("e" * (300 - 12 - len("openai-compatible: HTTP 400: ")) + auth)
        )

    with OpenAIServer(hostile) as server:
        url = server.base_url.replace("http://", f"http://user:{SECRET}@")
        result = _judge(run, items, url)
        report = runner.invoke(app, ["report", "--run", str(run)])
    assert result.exit_code == ExitCode.INCOMPLETE, result.stderr
    outputs = result.stdout + result.stderr + report.stdout + report.stderr
    files = [p for p in run.rglob("*") if p.is_file()]
    for needle in [SECRET, *(KEY[i : i + 8] for i in range(len(KEY) - 8))]:
        assert needle not in outputs, needle
        assert [str(p) for p in files if needle.encode() in p.read_bytes()] == [], needle
    assert "***@127.0.0.1" in outputs  # the 401 hint names the endpoint, masked
    assert "http://***@127.0.0.1" in (run / "manifest.json").read_text()


# --- 8. rich markup in server text, item ids and subset names ---------------------------------------


def test_markup_in_outside_text_is_printed_as_text(tmp_path: Path) -> None:
    """Before: MarkupError, exit 1 instead of 3, the judge summary lost; report.md copied a subset
    named `<img src=x onerror=alert(1)>` unescaped."""
    rows = [
        {
            "id": f"[/x]q{i}",
            "subset": "<img src=x onerror=alert(1)>" if i % 2 else "[/bold]Natural",
            "instruction": f"task {i}",
            "output_1": "[good] yes",
            "output_2": "no",
            "label": 1,
        }
        for i in range(4)
    ]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def responder(request: SeenRequest) -> Reply:
        user = str(request.body["messages"][-1]["content"]) if isinstance(request.body, dict) else ""
        if "task 0" in user:
            return Reply(status=400, body=error_body("[/red] rejected [bold]x[/bold] [/]"))
        return Reply(body=chat_body('{"winner": "A", "confidence": 0.9, "reason": "[/b] fine"}'))

    run = tmp_path / "run"
    with OpenAIServer(responder) as server:
        result = _judge(run, data, server.base_url)
    _no_traceback(result)
    assert result.exit_code == ExitCode.INCOMPLETE, result.stderr
    assert "[/red] rejected" in result.stderr and "[/x]q0" in result.stderr
    assert "planned call(s)" in result.stdout  # the summary table
    report = runner.invoke(app, ["report", "--run", str(run)])
    _no_traceback(report)
    assert report.exit_code == ExitCode.OK, report.stderr
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)>" in md


# --- 6 and 9. a huge answer, a killed report, stray temps, plot modes, silent drops ------------------


def test_huge_answer_is_stored_once_capped_with_its_size(tmp_path: Path) -> None:
    """Before: a 5 MB answer stored whole twice per line (raw and reason). Now: raw cut to the cap
    (64 KiB of text by default), the original size and the cap recorded, the reason clipped."""
    items = write_items(tmp_path / "items.jsonl", 2)
    answer = json.dumps({"winner": "A", "confidence": 0.9, "reason": "why " * 250_000})
    with OpenAIServer(lambda _r: Reply(body=chat_body(answer))) as server:
        result = _judge(tmp_path / "run", items, server.base_url)
    assert result.exit_code == ExitCode.OK, result.stderr
    records = _records(tmp_path / "run")
    assert records and all(r.winner == "A" for r in records)
    for r in records:
        assert r.raw is not None and len(r.raw) == 65536
        assert r.raw_chars == len(answer) and r.raw_cap == 65536
        assert r.reason is None or len(r.reason) <= 2000
    assert (tmp_path / "run" / JUDGMENTS).stat().st_size < 2 * len(records) * 70_000


def test_a_report_killed_while_writing_leaves_the_old_set_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: metrics.json was replaced before the report was rendered, so a kill between them left a
    new metrics.json beside an old report.html, and a kill mid-plot a stray .tmp file; plots were
    0600. Now every file is rendered first and renamed together; stale temps are removed; plots get
    the umask's mode like every output."""
    import judgebench.report.writer as writer

    items = write_items(tmp_path / "items.jsonl", ITEMS)
    run = tmp_path / "run"
    with OpenAIServer(DeterministicJudge()) as server:
        assert _judge(run, items, server.base_url).exit_code == ExitCode.OK
    assert runner.invoke(app, ["report", "--run", str(run)]).exit_code == ExitCode.OK
    before = {
        p.name: p.read_bytes()
        for p in run.iterdir()
        if p.is_file() and p.name.startswith(("metrics", "report"))
    }
    (run / ".metrics.json.abc123.tmp").write_text("{")  # what a kill -9 mid-write left
    (run / "plots" / ".accuracy.png.def456.tmp").write_bytes(b"\x89PNG")
    with open(run / JUDGMENTS, "a", encoding="utf-8") as fh:  # new data: a new report would differ
        record = _records(run)[0].model_copy(update={"verdict": None, "error": "gone"})
        fh.write(record.model_dump_json() + "\n")

    def killed(*_a: Any, **_k: Any) -> str:
        raise KeyboardInterrupt  # the kill, after metrics and plots were computed

    monkeypatch.setattr(writer, "render_html", killed)
    interrupted = runner.invoke(app, ["report", "--run", str(run)])
    assert interrupted.exit_code == ExitCode.INTERRUPTED
    after = {name: (run / name).read_bytes() for name in before}
    assert after == before  # the old set, whole
    assert list(run.rglob("*.tmp")) == []
    monkeypatch.undo()
    assert runner.invoke(app, ["report", "--run", str(run)]).exit_code == ExitCode.OK
    umask = os.umask(0)
    os.umask(umask)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (run / "plots").glob("*.png")}
    assert modes and set(modes.values()) == {0o666 & ~umask}


def test_translate_says_how_many_variant_lines_it_left_out(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    from tests.e2e.helpers import write_variants

    variants = write_variants(items, tmp_path / "variants.jsonl")  # zh and ls for every item
    args = ["translate", "--run", str(tmp_path / "run"), "--dataset", str(items), "--variants", str(variants)]
    result = runner.invoke(app, [*args, "--conditions", "zh", "--limit", "2"])
    assert result.exit_code == ExitCode.OK, result.stderr
    assert f"note: {2 * ITEMS - 2} line(s) of" in result.stderr and "left out" in result.stderr
