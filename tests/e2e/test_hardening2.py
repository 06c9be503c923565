"""Issue 29 end to end, as a user would meet it: a server that rejects the key, and the other defect
classes of the second hostile pass. Each ends with no traceback and one clear message, nothing paid
for lost, nothing paid twice."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.models.client import KEY_REJECTIONS_TO_STOP
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, read_jsonl
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
    # the calls sent are the ones that failed; the rest were never sent, and said so
    told = re.search(r"(\d+) call\(s\) failed; (\d+) not sent", err)
    assert told is not None and "... and 50 more" in err, err
    assert int(told[1]) <= sent and int(told[1]) + int(told[2]) == 60, (told[0], sent)
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


# --- 5. spreadsheet formulas and control characters from data --------------------------------------

HOSTILE_SUBSETS = (
    '=HYPERLINK("http://x","y")',
    "+cmd",
    "-2+3",
    "@SUM(A1)",
    "Natural\r# Planted",
    "Esc\x1b[2J",
)


def _hostile_items(path: Path) -> Path:
    import json

    items = write_items(path, 24)
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    for i, row in enumerate(rows):
        row["subset"] = HOSTILE_SUBSETS[i % len(HOSTILE_SUBSETS)]
        if i == 0:
            row["id"] = "=1+1"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_formulas_and_control_characters_from_data_are_neutralised(tmp_path: Path) -> None:
    """Before: subset names starting with = + - @ were live formulas in metrics.csv, a lone carriage
    return in a subset name misaligned the CSV rows and planted a `# heading` in report.md, an ESC
    reached the terminal. Now: each is text, in its own cell, row and line."""
    import csv
    import io
    import json

    items = _hostile_items(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    judged = runner.invoke(
        app, ["judge", "--run", str(run), "--dataset", str(items), "--model", "sim:default"]
    )
    assert judged.exit_code == 0, judged.stderr
    report = runner.invoke(app, ["report", "--run", str(run)])
    assert report.exit_code == 0, report.stderr
    assert "\x1b" not in report.stdout + report.stderr

    records = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    text = (run / "metrics.csv").read_text(encoding="utf-8")
    assert "\r" not in text and "\x1b" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(records if isinstance(records, list) else records["metrics"])
    for row in rows:
        for value in (row["judge"], row["subset"], row["condition"], row["metric"]):
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), value
    subsets = {row["subset"] for row in rows}
    assert '\'=HYPERLINK("http://x","y")' in subsets and "'@SUM(A1)" in subsets
    assert "Natural\u240d# Planted" in subsets
    numbers = [float(row["value"]) for row in rows if row["value"]]
    assert numbers and all(isinstance(v, float) for v in numbers)  # numbers stay numbers

    md = (run / "report.md").read_text(encoding="utf-8")
    assert "\r" not in md and "\x1b" not in md
    assert not [line for line in md.splitlines() if line.startswith("# Planted")]
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "\r" not in html and "\x1b" not in html


def test_ordinary_names_and_negative_numbers_are_unchanged(tmp_path: Path) -> None:
    from judgebench.records.sanitize import spreadsheet_cell, visible_controls

    assert spreadsheet_cell("Adversarial/Neighbor") == "Adversarial/Neighbor"
    assert spreadsheet_cell(-0.25) == -0.25 and spreadsheet_cell(3) == 3
    assert visible_controls("zh: 你好\n", keep="\n") == "zh: 你好\n"
    items = write_items(tmp_path / "items.jsonl", 10)
    run = tmp_path / "run"
    assert (
        runner.invoke(
            app, ["judge", "--run", str(run), "--dataset", str(items), "--model", "sim:default"]
        ).exit_code
        == 0
    )
    assert runner.invoke(app, ["report", "--run", str(run)]).exit_code == 0
    text = (run / "metrics.csv").read_text(encoding="utf-8")
    assert ",Adversarial/Neighbor," in text and "'" not in text


# --- 2. a resume that silently mixes settings -----------------------------------------------------

TEMPLATES = Path(__file__).resolve().parents[2] / "configs" / "templates"


def _sim_judge(run: Path, items: Path, *extra: str) -> Any:
    return runner.invoke(
        app, ["judge", "--run", str(run), "--dataset", str(items), "--model", "sim:default", *extra]
    )


def test_a_resume_with_another_template_is_refused_naming_what_changed(tmp_path: Path) -> None:
    """Before: the items judged with the old template counted as done, the rest were judged with the
    new one, and the manifest named only the new template. Now: refused, nothing called or written."""
    import json

    items = write_items(tmp_path / "items.jsonl", 12)
    run = tmp_path / "run"
    first = _sim_judge(run, items, "--limit", "5")
    assert first.exit_code == 0, first.stderr
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    meaning = manifest["stages"]["judge"]["judges"]["sim:default"]["meaning"]
    assert meaning["template"] == "judge-default-v1" and meaning["spec"] == "sim:default"  # what was used
    before = (run / JUDGMENTS).read_bytes()

    other = _sim_judge(run, items, "--template", str(TEMPLATES / "judge_verdict_only.toml"))
    _no_traceback(other)
    assert other.exit_code != 0
    assert "judge sim:default was judged here with other settings" in other.stderr
    assert "template judge-default-v1 -> " in other.stderr and "new --run folder" in other.stderr
    assert (run / JUDGMENTS).read_bytes() == before

    same = _sim_judge(run, items)  # the ordinary resume: same settings, the rest judged
    assert same.exit_code == 0, same.stderr
    assert len(_verdicts(run)) == 24


def test_a_resume_with_another_temperature_in_judges_toml_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs = tmp_path / "configs"  # the private copy the fixture made
    judges = configs / "judges.toml"
    base = judges.read_text(encoding="utf-8")
    judges.write_text(base + '\n[judges.mine]\nspec = "sim:default"\ntemperature = 0.0\n', encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    items = write_items(tmp_path / "items.jsonl", 8)
    run = tmp_path / "run"
    first = runner.invoke(
        app, ["judge", "--run", str(run), "--dataset", str(items), "--model", "mine", "--limit", "3"]
    )
    assert first.exit_code == 0, first.stderr
    judges.write_text(base + '\n[judges.mine]\nspec = "sim:default"\ntemperature = 0.7\n', encoding="utf-8")
    again = runner.invoke(app, ["judge", "--run", str(run), "--dataset", str(items), "--model", "mine"])
    assert again.exit_code != 0 and "temperature 0.0 -> 0.7" in again.stderr, again.stderr
    # a new name for the new settings is a separate judge: allowed beside the first
    judges.write_text(
        base + '\n[judges.mine]\nspec = "sim:default"\ntemperature = 0.0\n'
        '\n[judges.mine-warm]\nspec = "sim:default"\ntemperature = 0.7\n',
        encoding="utf-8",
    )
    both = runner.invoke(
        app, ["judge", "--run", str(run), "--dataset", str(items), "--model", "mine", "--model", "mine-warm"]
    )
    assert both.exit_code == 0, both.stderr
    judged = {key[0] for key in _verdicts(run)}
    assert judged == {"mine", "mine-warm"}
