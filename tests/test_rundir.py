"""The run folder survives crashes: whole-record appends, atomic whole-file writes, safe paths."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgebench.errors import InputError, RunDirError
from judgebench.records import AuditFlag
from judgebench.records.manifest import DatasetEntry
from judgebench.store.atomic_files import atomic_write_json
from judgebench.store.run_folder import JsonlAppender, RunDir, read_jsonl, safe_run_path


def _flag(i: int) -> AuditFlag:
    return AuditFlag(item_id=f"Natural/{i}", condition="zh", field="output_1", rule="empty", detail="x" * 50)


def test_a_half_written_last_line_is_ignored_then_cut_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonlAppender(path) as out:
        out.append(_flag(0))
        out.append(_flag(1))
    with open(path, "a", encoding="utf-8") as fh:  # what a kill in the middle of a write leaves
        fh.write('{"item_id": "Natural/2", "condition": "zh", "fie')
    assert [f.item_id for f in read_jsonl(path, AuditFlag)] == ["Natural/0", "Natural/1"]
    with JsonlAppender(path) as out:
        out.append(_flag(3))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    assert [f.item_id for f in read_jsonl(path, AuditFlag)] == ["Natural/0", "Natural/1", "Natural/3"]


def test_a_bad_line_in_the_middle_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text(
        json.dumps(_flag(0).model_dump()) + "\nnot json\n" + json.dumps(_flag(1).model_dump()) + "\n"
    )
    with pytest.raises(InputError, match=r"audit\.jsonl, line 2: unreadable record"):
        list(read_jsonl(path, AuditFlag))


_WRITER = """
import sys
from judgebench.records import AuditFlag
from judgebench.store.run_folder import JsonlAppender
with JsonlAppender(__import__("pathlib").Path(sys.argv[1])) as out:
    i = 0
    while True:
        out.append(AuditFlag(item_id=f"Natural/{i}", condition="zh", field="output_1", rule="empty",
                             detail="x" * 3000))
        i += 1
"""


def test_kill_9_mid_append_leaves_only_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not path.exists() or path.stat().st_size < 400_000):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    records = list(read_jsonl(path, AuditFlag))
    assert len(records) > 50
    assert [r.item_id for r in records] == [f"Natural/{i}" for i in range(len(records))]
    with JsonlAppender(path) as out:  # the run goes on after the crash
        out.append(_flag(-1))
    assert list(read_jsonl(path, AuditFlag))[-1].item_id == "Natural/-1"


def test_a_crash_during_an_atomic_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "metrics.json"
    atomic_write_json(path, {"version": 1})

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_json(path, {"version": 2})
    assert json.loads(path.read_text()) == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]  # no temp file left behind


def test_run_paths_that_climb_out_are_refused(tmp_path: Path) -> None:
    for bad in ("../x", "runs/../../x", "/tmp/a/../b"):
        with pytest.raises(RunDirError, match=r"'\.\.'"):
            safe_run_path(bad)
    assert safe_run_path("runs/one") == Path("runs/one")


def test_a_run_refuses_another_dataset(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    run.init(dataset=DatasetEntry(spec="sample", checksum="a" * 64, items=1))
    with pytest.raises(RunDirError, match="refusing to mix"):
        run.init(dataset=DatasetEntry(spec="llmbar", checksum="b" * 64, items=1))
    manifest = run.load_manifest()
    assert manifest is not None and manifest.dataset is not None and manifest.dataset.spec == "sample"


def test_credentials_in_a_recorded_command_line_are_masked() -> None:
    from judgebench.store.run_folder import redact_command

    argv = [
        "judgebench",
        "judge",
        "--base-url",
        "https://user:s3cret@host:8000/v1?api-key=abc&x=1",
        "--run",
        "r",
    ]
    out = redact_command(argv)
    assert "s3cret" not in " ".join(out) and "abc" not in " ".join(out)
    assert out[3] == "https://***@host:8000/v1?api-key=***&x=1" and out[:3] == argv[:3]
