"""Issue 41 (third hostile pass), the classes about files and outside text: a last record without its
newline kept, not cut and paid again (2); linear time on hostile Markdown (5); JSON nested 100,000
deep (6) and a repeated key (7) in an outside file refused naming the file and line; an output set
written all or none when a folder is in the way of one file (9); the Parquet table beside
judgments.jsonl not trusted after an edit in the middle with the modification time put back (10).
Each through the real path: the CLI, the api or the table's reader on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.api.selftest import synthetic_items
from judgebench.cli import app
from judgebench.config.paths import configs_dir, data_dir
from judgebench.records import Judgment
from judgebench.store.judgment_table import cache_path, read_judgment_table
from judgebench.store.run_folder import JUDGMENTS, read_jsonl
from tests.e2e.helpers import FAST_JUDGE, DeterministicJudge, private_configs, write_items
from tests.human.test_cli import run_dir  # noqa: F401 - the fixture: a sample run judged by sim
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


# --- 6 and 7. hostile nesting and repeated keys in outside files ------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def _replace_line(path: Path, number: int, make: Any) -> None:
    """Line `number` (1-based) of a JSONL file replaced by `make(its object)`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = make(json.loads(lines[number - 1]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _repeated(key: str, value: object) -> Any:
    return lambda row: json.dumps(row)[:-1] + f", {json.dumps(key)}: {json.dumps(value)}}}"


def _deep(row: dict[str, Any]) -> str:
    return json.dumps(row)[:-1] + f', "meta": {DEEP}}}'


def _refused(result: Any, path: Path, line: int, why: str) -> None:
    out = (result.stdout or "") + (result.stderr or "")
    assert "Traceback" not in out, out[-2000:]
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code != 0
    message = " ".join(result.stderr.split())
    assert f"{path.name}, line {line}:" in message and why in message, message


HOSTILE_LINES = {"repeated key": (_repeated("label", 2), "is repeated"), "deep": (_deep, "nested deeper")}


@pytest.mark.parametrize("kind", sorted(HOSTILE_LINES))
def test_a_dataset_line_with_a_repeated_key_or_deep_nesting_is_refused(tmp_path: Path, kind: str) -> None:
    """Before: `"label": 1, ..., "label": 2` was read as label 2, silently; a line nested 100,000
    deep ended in a RecursionError traceback. Now each is refused naming the file and the line, in
    JSONL and in a JSON array alike; the same file without the hostile line is read."""
    make, why = HOSTILE_LINES[kind]
    variants = data_dir() / "sample_variants.jsonl"
    good = tmp_path / "sample.jsonl"
    good.write_bytes((data_dir() / "sample.jsonl").read_bytes())
    done = runner.invoke(
        app,
        ["translate", "--run", str(tmp_path / "ok"), "--dataset", str(good), "--variants", str(variants)],
    )
    assert done.exit_code == 0, done.output  # the planted side: the file as it is is read

    items = tmp_path / "items.jsonl"
    items.write_bytes(good.read_bytes())
    _replace_line(items, 3, make)
    args = ["translate", "--run", str(tmp_path / "run"), "--variants", str(variants), "--dataset"]
    _refused(runner.invoke(app, [*args, str(items)]), items, 3, why)

    array = tmp_path / "items.json"
    rows = items.read_text(encoding="utf-8").splitlines()
    array.write_text("[\n" + ",\n".join(rows) + "\n]\n", encoding="utf-8")
    _refused(runner.invoke(app, [*args, str(array)]), array, 4, why)


@pytest.mark.parametrize("kind", sorted(HOSTILE_LINES))
def test_a_variants_line_with_a_repeated_key_or_deep_nesting_is_refused(tmp_path: Path, kind: str) -> None:
    make, why = HOSTILE_LINES[kind]
    variants = tmp_path / "variants.jsonl"
    variants.write_bytes((data_dir() / "sample_variants.jsonl").read_bytes())
    make = _repeated("output_1", "the other text") if kind == "repeated key" else make
    _replace_line(variants, 2, make)
    args = ["translate", "--run", str(tmp_path / "run"), "--dataset", "sample", "--variants", str(variants)]
    _refused(runner.invoke(app, args), variants, 2, why)


@pytest.mark.parametrize("kind", sorted(HOSTILE_LINES))
def test_a_human_labels_line_with_a_repeated_key_or_deep_nesting_is_refused(
    tmp_path: Path,
    run_dir: Path,  # noqa: F811 - the fixture imported above
    kind: str,
) -> None:
    make, why = HOSTILE_LINES[kind]
    labels = tmp_path / "human.jsonl"
    labels.write_bytes((data_dir() / "sample_human.jsonl").read_bytes())
    _replace_line(labels, 5, make)
    result = runner.invoke(
        app, ["report", "--run", str(run_dir), "--bootstrap", "20", "--human", str(labels)]
    )
    _refused(result, labels, 5, why)


def test_a_bbe_score_table_line_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    """The score table of `bbe --scores` (JSON Lines) is read by the same strict reader: before,
    pandas kept the last `score` of a line silently."""
    import csv

    source = Path(__file__).resolve().parents[2] / "data" / "bbe" / "scores_factors.csv"
    with open(source, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    table = tmp_path / "scores.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = ["bbe", "--tau", "0.5", "--delta", "0.01", "--scores", str(table), "--scale", "1", "10"]
    args += ["--strategy", "rms", "--jitter", "auto", "--alpha", "auto", "--out", str(tmp_path / "bbe.json")]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output  # the planted side: the table as it is is read
    _replace_line(table, 3, _repeated("score", "10"))
    _refused(runner.invoke(app, args), table, 3, "is repeated")


def test_a_template_nested_deep_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    """Before: a template TOML with an array nested 100,000 deep ended in a RecursionError
    traceback (tomllib recurses); now it is refused naming the file and the line."""
    template = tmp_path / "template.toml"
    text = (configs_dir() / "templates" / "judge_default.toml").read_text(encoding="utf-8")
    line = text.count("\n") + 2
    template.write_text(text + "\nextra = " + DEEP + "\n", encoding="utf-8")
    args = ["judge", "--run", str(tmp_path / "run"), "--dataset", "sample", "--model", "sim:probe-biased"]
    result = runner.invoke(app, [*args, "--template", str(template)])
    out = (result.stdout or "") + (result.stderr or "")
    assert "Traceback" not in out and not isinstance(result.exception, RecursionError), repr(result.exception)
    message = " ".join(result.stderr.split())
    assert result.exit_code != 0 and "template.toml" in message and f"line {line}" in message, message


# --- 9. an output set, all or none ------------------------------------------------------------------


def _sim_run(base: Path, name: str, model: str) -> Path:
    data, variants = base / "items.jsonl", base / "variants.jsonl"
    if not data.exists():
        synthetic_items(40, data, variants)
    run = base / name
    api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=variants))
    api.judge(run, api.JudgeRequest(models=[model]), options=api.CallOptions(use_cache=False))
    return run


def test_a_folder_in_the_way_of_one_compare_output_leaves_the_whole_old_set(tmp_path: Path) -> None:
    """Before: compare.json, compare.md and compare_changed.jsonl were replaced, then the rename onto
    the folder named compare_changed.csv failed: a set half old, half new. Now the set is checked
    before the first rename: nothing is replaced, and the error names the folder."""
    day1 = _sim_run(tmp_path, "day1", "sim:drift-stable/1")
    day2 = _sim_run(tmp_path, "day2", "sim:drift-worse/2")
    out = tmp_path / "out"
    first = runner.invoke(app, ["compare", str(day1), str(day2), "--out", str(out)])
    assert first.exit_code == 0, first.output
    (out / "compare_changed.csv").unlink()
    (out / "compare_changed.csv").mkdir()  # e.g. a spreadsheet tool's folder of the same name
    before = {p.name: (p.stat().st_ino, p.read_bytes()) for p in out.iterdir() if p.is_file()}
    assert set(before) == {"compare.json", "compare.md", "compare_changed.jsonl"}
    second = runner.invoke(app, ["compare", str(day2), str(day1), "--out", str(out)])  # another set
    assert "Traceback" not in second.output and isinstance(second.exception, SystemExit)
    assert second.exit_code != 0
    after = {p.name: (p.stat().st_ino, p.read_bytes()) for p in out.iterdir() if p.is_file()}
    assert after == before  # the old set whole
    message = " ".join(second.stderr.split())
    assert "compare_changed.csv" in message and "none of the 4 files was written" in message, message
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


# --- 10. the table beside the log after an edit in the middle, modification time put back ---------


def test_an_edit_mid_log_with_its_mtime_put_back_makes_the_table_stale(tmp_path: Path) -> None:
    """Before: the table's fingerprint was the log's size, modification time and first and last MiB,
    so a verdict edited in place in the middle of a 3 MB log at the same length, with the time put
    back (`touch -r`), left the old verdict in every report. Now the change time and inode are part
    of it (a write sets st_ctime, no user can set it back): the table is rebuilt from the log."""
    path = tmp_path / "judgments.jsonl"
    padding = "x" * 900  # lines of ~1 KB: 3,000 of them put the middle outside the first and last MiB
    lines = []
    for i in range(3000):
        record = {"judge": "j", "item_id": f"i{i}", "subset": "Natural", "kind": "pair", "condition": "en"}
        record |= {"order": "orig", "verdict": "1", "winner": "A", "label": 1, "raw": padding}
        lines.append(Judgment.model_validate(record).model_dump_json() + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    first = read_judgment_table(path).frame
    assert (first["verdict"] == "1").all() and cache_path(path).exists()
    made = cache_path(path).stat().st_mtime_ns
    assert read_judgment_table(path).frame.equals(first)  # the planted side: unchanged, the table is used
    assert cache_path(path).stat().st_mtime_ns == made

    data = path.read_bytes()
    at = data.index(b'"item_id":"i1500"')
    line_end = data.index(b"\n", at)
    start = data.rindex(b"\n", 0, at) + 1
    assert start > (1 << 20) and line_end < len(data) - (1 << 20)  # outside the first and last MiB
    edited = data[start:line_end].replace(b'"verdict":"1"', b'"verdict":"2"').replace(b'"A"', b'"B"')
    stat = path.stat()
    with open(path, "r+b") as fh:  # in place: the same file, the same length
        fh.seek(start)
        fh.write(edited)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as `touch -r` puts the time back
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    after = read_judgment_table(path).frame
    assert after.loc[after["item_id"] == "i1500", "verdict"].tolist() == ["2"]
    assert (after["verdict"] == "2").sum() == 1
