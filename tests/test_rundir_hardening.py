"""Issue 17, the run folder: one writer per stage (an advisory lock), torn lines anywhere, records
that cannot be written as UTF-8."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgebench.errors import RunDirError
from judgebench.records import AuditFlag
from judgebench.store.run_folder import JsonlAppender, RunDir, read_jsonl


def _flag(i: int, detail: str = "x") -> AuditFlag:
    return AuditFlag(item_id=f"Natural/{i}", condition="zh", field="output_1", rule="empty", detail=detail)


_HOLDER = """
import sys, time
from judgebench.store.run_folder import RunDir
with RunDir(sys.argv[1]).lock("judge"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.timeout(60)
def test_a_second_writer_is_refused_naming_the_holder_or_waits(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path), "1.5"], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    refused = rf"another 'judge' \(pid {holder.pid}\).*--wait-lock"
    with pytest.raises(RunDirError, match=refused), RunDir(tmp_path).lock("judge"):
        pass
    with RunDir(tmp_path).lock("report"):  # another stage is not held
        pass
    with RunDir(tmp_path).lock("judge", wait=True):  # waits for the holder to let go
        assert (tmp_path / ".judge.lock").read_text().strip() == str(os.getpid())
        assert holder.wait(timeout=30) == 0


@pytest.mark.timeout(60)
def test_a_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path), "60"], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    holder.kill()
    holder.wait()
    assert (tmp_path / ".judge.lock").read_text().strip() == str(holder.pid)
    start = time.monotonic()
    with RunDir(tmp_path).lock("judge"):
        assert (tmp_path / ".judge.lock").read_text().strip() != str(holder.pid)
    assert time.monotonic() - start < 30  # taken at once, not after a wait


def test_a_torn_line_mid_file_is_skipped_with_a_warning_and_its_tail_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "audit.jsonl"
    whole = [json.dumps(_flag(i).model_dump()) for i in range(4)]
    # writer 1 killed mid-line; writer 2 appended record 1 right after the half line
    path.write_text(whole[0] + "\n" + whole[2][:30] + whole[1] + "\n" + whole[3] + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="judgebench.store.run_folder"):
        ids = [f.item_id for f in read_jsonl(path, AuditFlag)]
    assert ids == ["Natural/0", "Natural/1", "Natural/3"]
    assert any("1 torn line(s) (line 2)" in r.getMessage() for r in caplog.records)


def test_a_record_with_a_lone_surrogate_is_written_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonlAppender(path) as out:
        out.append(_flag(0, detail="server said \ud800"))
        out.append(_flag(1))
    assert [f.detail for f in read_jsonl(path, AuditFlag)] == ["server said \ufffd", "x"]
