"""Issue 29, class 6: a torn line does not stay torn. The next stage that writes the file (holding
the run's lock) rewrites it once, atomically, as valid JSONL; the fragment goes to a `.torn` sidecar."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from judgebench.records import AuditFlag
from judgebench.store.run_folder import JsonlAppender, read_jsonl
from judgebench.store.torn_lines import TORN_SUFFIX


def _flag(i: int) -> str:
    flag = AuditFlag(item_id=f"Natural/{i}", condition="zh", field="output_1", rule="empty", detail="x")
    return json.dumps(flag.model_dump())


def _every_line_parses(path: Path) -> bool:
    for line in path.read_text(encoding="utf-8").splitlines():
        json.loads(line)
    return True


def _torn_file(path: Path) -> str:
    whole = [_flag(i) for i in range(4)]
    fragment = whole[2][:30]
    # writer 1 killed mid-line; writer 2 appended record 1 right after the half line, then record 3
    path.write_text(whole[0] + "\n" + fragment + whole[1] + "\n" + whole[3] + "\n", encoding="utf-8")
    return fragment


def test_the_next_writer_repairs_a_torn_line_and_keeps_the_fragment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "audit.jsonl"
    fragment = _torn_file(path)
    with pytest.raises(json.JSONDecodeError):  # before: invalid JSONL for any other reader, for ever
        _every_line_parses(path)
    assert [f.item_id for f in read_jsonl(path, AuditFlag)] == ["Natural/0", "Natural/1", "Natural/3"]
    with caplog.at_level(logging.WARNING, logger="judgebench.store.run_folder"), JsonlAppender(path) as out:
        out.append(AuditFlag.model_validate_json(_flag(4)))
    assert _every_line_parses(path)
    assert [f.item_id for f in read_jsonl(path, AuditFlag)] == [
        "Natural/0",
        "Natural/1",
        "Natural/3",
        "Natural/4",
    ]
    assert (tmp_path / f"audit.jsonl{TORN_SUFFIX}").read_text(encoding="utf-8") == fragment + "\n"
    assert any("repaired 1 torn line(s)" in r.getMessage() for r in caplog.records)


def test_a_fragment_with_no_record_in_it_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    whole = [_flag(i) for i in range(3)]
    path.write_text(whole[0] + "\n" + whole[1][:25] + "\n" + whole[2] + "\n", encoding="utf-8")
    assert len(list(read_jsonl(path, AuditFlag))) == 2
    with JsonlAppender(path):
        pass
    assert path.read_text(encoding="utf-8") == whole[0] + "\n" + whole[2] + "\n"
    assert (tmp_path / f"audit.jsonl{TORN_SUFFIX}").read_text(encoding="utf-8") == whole[1][:25] + "\n"


def test_a_reader_alone_never_rewrites_and_a_whole_file_is_left_as_it_is(tmp_path: Path) -> None:
    """The ordinary case: a reader that is not the file's writer (report) changes nothing, and a
    writer opening a whole file does not rewrite it (same inode, no sidecar)."""
    torn = tmp_path / "torn.jsonl"
    _torn_file(torn)
    before = torn.read_bytes()
    list(read_jsonl(torn, AuditFlag))
    assert torn.read_bytes() == before

    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(_flag(i) + "\n" for i in range(3)), encoding="utf-8")
    inode = whole.stat().st_ino
    list(read_jsonl(whole, AuditFlag))
    with JsonlAppender(whole) as out:
        out.append(AuditFlag.model_validate_json(_flag(3)))
    assert whole.stat().st_ino == inode and not (tmp_path / f"whole.jsonl{TORN_SUFFIX}").exists()
    assert len(list(read_jsonl(whole, AuditFlag))) == 4


def test_a_file_changed_since_it_was_read_is_not_rewritten_from_stale_knowledge(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _torn_file(path)
    list(read_jsonl(path, AuditFlag))
    path.write_text("".join(_flag(i) + "\n" for i in range(2)), encoding="utf-8")  # someone fixed it
    with JsonlAppender(path):
        pass
    assert not (tmp_path / f"audit.jsonl{TORN_SUFFIX}").exists()


def test_a_last_line_without_its_newline_is_kept_when_whole_and_set_aside_when_cut(tmp_path: Path) -> None:
    """Issue 41, class 2, both sides: a whole record (JSON the file's model accepts) gets its newline;
    a line cut short by a kill, or an object that is no record of the file, goes to the sidecar."""
    whole = [_flag(i) for i in range(3)]
    kept = tmp_path / "kept" / "audit.jsonl"
    kept.parent.mkdir()
    kept.write_text(whole[0] + "\n" + whole[1], encoding="utf-8")
    with JsonlAppender(kept) as out:
        out.append(AuditFlag.model_validate_json(whole[2]))
    assert kept.read_text(encoding="utf-8").startswith(whole[0] + "\n" + whole[1] + "\n")
    assert [f.item_id for f in read_jsonl(kept, AuditFlag)] == ["Natural/0", "Natural/1", "Natural/2"]
    assert not (kept.parent / f"audit.jsonl{TORN_SUFFIX}").exists()

    for tail in (whole[1][:-1], '{"item_id": "Natural/1"}'):  # cut short; parses but is no AuditFlag
        cut = tmp_path / str(len(tail)) / "audit.jsonl"
        cut.parent.mkdir()
        cut.write_text(whole[0] + "\n" + tail, encoding="utf-8")
        with JsonlAppender(cut) as out:
            out.append(AuditFlag.model_validate_json(whole[2]))
        assert cut.read_text(encoding="utf-8").startswith(whole[0] + "\n{")
        assert [f.item_id for f in read_jsonl(cut, AuditFlag)] == ["Natural/0", "Natural/2"]
        assert (cut.parent / f"audit.jsonl{TORN_SUFFIX}").read_text(encoding="utf-8") == tail + "\n"


def test_a_run_file_line_nested_too_deep_is_named_not_a_traceback(tmp_path: Path) -> None:
    """Issue 41, class 6, in the run's own files (edited by hand): the reader names the file and
    the line instead of ending in a RecursionError."""
    from judgebench.errors import InputError

    path = tmp_path / "audit.jsonl"
    path.write_text(
        _flag(0) + "\n" + '{"item_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"audit\.jsonl, line 2: unreadable record \(nested too deep\)"):
        list(read_jsonl(path, AuditFlag))
