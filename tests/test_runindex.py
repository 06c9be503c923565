"""`JsonlIndex`: a run file read once, kept in step with its own appends, and read again whenever the
file changed by other means (so a cached answer is never one the file no longer gives)."""

from __future__ import annotations

from pathlib import Path

from judgebench.records import CallKey, Judgment, Variant
from judgebench.records.manifest import HistoryEntry, ReportStage
from judgebench.store.run_folder import JUDGMENTS, IndexedAppender, JsonlAppender, RunDir


def _j(item: str, verdict: str | None = "1") -> Judgment:
    return Judgment(judge="j", item_id=item, subset="s", kind="pair", condition="en", order="orig",
                    verdict=verdict)  # fmt: skip


def _key(item: str) -> CallKey:
    return CallKey("j", item, "pair", "en", "orig")


def test_read_once_then_appends_join_without_a_read(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    with JsonlAppender(tmp_path / JUDGMENTS) as out:
        out.append(_j("a"))
        out.append(_j("b", verdict=None))
    index = run.judgments()
    assert set(index.latest()) == {_key("a"), _key("b")} and index.reads == 1
    with IndexedAppender(index) as out:
        out.append(_j("b"))  # supersedes the failed call
        out.append(_j("c"))
    assert index.latest()[_key("b")].verdict == "1" and _key("c") in index.latest()
    assert index.reads == 1
    assert run.judgments() is index  # one index per file per run folder object
    # what the index holds is what a fresh reader of the file finds, in the same order
    fresh = RunDir(tmp_path).judgments().latest()
    assert list(fresh) == list(index.latest()) and fresh == index.latest()


def test_a_file_changed_by_another_writer_is_read_again(tmp_path: Path) -> None:
    index = RunDir(tmp_path).judgments()
    with JsonlAppender(tmp_path / JUDGMENTS) as out:
        out.append(_j("a"))
    assert set(index.latest()) == {_key("a")}
    with JsonlAppender(tmp_path / JUDGMENTS) as out:  # not through the index
        out.append(_j("b"))
    assert set(index.latest()) == {_key("a"), _key("b")} and index.reads == 2
    # appending through the index after an outside write: the outside line is not lost either
    with JsonlAppender(tmp_path / JUDGMENTS) as out:
        out.append(_j("c"))
    with IndexedAppender(index) as out:
        out.append(_j("d"))
    assert set(index.latest()) == {_key(x) for x in "abcd"}
    # a rewrite (the file replaced) is noticed too
    (tmp_path / JUDGMENTS).write_text(_j("z").model_dump_json() + "\n")
    assert set(index.latest()) == {_key("z")}


def test_a_new_file_made_by_the_appender_is_never_read(tmp_path: Path) -> None:
    index = RunDir(tmp_path).judgments()
    assert index.latest() == {} and index.reads == 0
    with IndexedAppender(index) as out:
        out.append(_j("a"))
    assert set(index.latest()) == {_key("a")} and index.reads == 0


def test_a_torn_tail_cut_by_the_appender_means_one_more_read(tmp_path: Path) -> None:
    path = tmp_path / JUDGMENTS
    path.write_text(_j("a").model_dump_json() + "\n" + '{"judge": "j", "item_')  # a killed writer
    index = RunDir(tmp_path).judgments()
    assert set(index.latest()) == {_key("a")}
    with IndexedAppender(index) as out:  # cuts the torn tail on open, then appends
        out.append(_j("b"))
    assert set(index.latest()) == {_key("a"), _key("b")} and index.reads == 2
    assert path.read_text().count("\n") == 2


def test_the_manifest_is_read_once_and_handed_out_as_copies(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.init()
    mine = run.manifest()
    mine.history.append(HistoryEntry(stage="report", at="now"))  # a caller's change, not saved
    assert run.manifest().history == []
    run.record_stage("report", ReportStage(records=1))
    other = RunDir(tmp_path)  # another writer of the same folder
    changed = other.manifest()
    changed.stages.report = ReportStage(records=2)
    other.save_manifest(changed)
    assert run.manifest().stages.report == ReportStage.model_validate(changed.stages.report.model_dump())


def test_held_is_what_the_index_holds_only_while_the_file_is_unchanged(tmp_path: Path) -> None:
    index = RunDir(tmp_path).variants()
    assert index.held() is None  # nothing read yet: a caller reads what it needs itself
    with IndexedAppender(index) as out:
        out.append(Variant(item_id="a", condition="zh", instruction="问", output_1="甲", output_2="乙"))
    assert index.held() is None  # the appender made the file, but the index never loaded it
    assert set(index.latest()) == {("a", "zh")}
    held = index.held()
    assert held is not None and set(held) == {("a", "zh")} and index.reads == 1
    with JsonlAppender(tmp_path / "variants.jsonl") as out:  # another writer: what it holds is stale
        out.append(Variant(item_id="b", condition="zh", instruction="问", output_1="甲", output_2="乙"))
    assert index.held() is None
