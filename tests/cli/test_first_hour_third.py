"""The first hour, third pass: what still cost a new user time, one test per item."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.cli import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


# 2 --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, said",
    [
        ("sim:nonexistent", "no scenario 'nonexistent'"),
        ("sim:unbiased/x", "must be an integer seed"),
        ("local:nonexistent", "unknown local model 'local:nonexistent'"),
        ("local:missing.gguf", "local model file not found"),
    ],
)
@pytest.mark.parametrize("command", ["judge", "run"])
def test_2_unknown_sim_and_local_names_are_refused_before_anything_is_written(
    tmp_path: Path, spec: str, said: str, command: str
) -> None:
    run = tmp_path / "r"
    args = [command, "--run", str(run), "--model", spec, "--dry-run"]
    if command == "judge":
        args += ["--dataset", "sample"]
    code, out = invoke(*args)
    assert code == 1, out
    assert said in out
    assert not run.exists()  # no manifest, plan or variants: nothing was written
    code, out = invoke(*[a for a in args if a != "--dry-run"], *(["--yes"] if command == "run" else []))
    assert code == 1 and said in out
    assert not run.exists()


def test_2_known_sim_and_local_names_still_pass_the_early_check(tmp_path: Path) -> None:
    for spec in ("sim:unbiased", "sim:unbiased/7", "local"):
        code, out = invoke("judge", "--run", str(tmp_path / spec.replace(":", "_")), "--dataset", "sample",
                           "--model", spec, "--dry-run")
        assert code == 0, (spec, out)


# 1 --------------------------------------------------------------------------------------------------


def in_a_terminal(args: list[str], columns: int = 80) -> str:
    """The command as a user at an 80-column terminal sees it: a real pty of that width, colours
    stripped."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgebench", *args], stdin=follower, stdout=follower, stderr=follower,
        env=env, close_fds=True,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the pty closes when the process ends
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=600)
    os.close(leader)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _whole(text: str, *values: str) -> None:
    assert "…" not in text, text
    for value in values:
        assert value in text, (value, text)


def test_1_tables_at_80_columns_show_every_number_and_name_whole(tmp_path: Path) -> None:
    models = ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5", "sim:drift-stable"]
    dry = in_a_terminal(["run", "--run", str(tmp_path / "d"), *[a for m in models for a in ("--model", m)],
                         "--dry-run"])
    _whole(dry, *models, "105,630")
    code, out = invoke("run", "--run", str(tmp_path / "a"), "--model", "sim:drift-stable", "--yes")
    assert code == 0, out
    code, out = invoke("run", "--run", str(tmp_path / "b"), "--model", "sim:drift-stable", "--yes")
    assert code == 0, out
    compared = in_a_terminal(["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    _whole(compared, "sim:drift-stable", "compared")
    report = in_a_terminal(["report", "--run", str(tmp_path / "a")])
    _whole(report, "sim:drift-stable")
    assert re.search(r"\b(PASS|FAIL|INCONCLUSIVE)\b", report)
    plan = in_a_terminal(["plan", "--dataset", "sample", *[a for m in models[:2] for a in ("--model", m)]])
    _whole(plan, *models[:2])


def test_1_a_table_too_wide_becomes_records_and_one_that_fits_stays_a_table() -> None:
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    from judgebench.cli.app import as_records, fits

    wide = Table(title="t")
    for name in ("stage", "model", "calls", "input tok", "output tok", "live", "batch", "time", "x", "y"):
        wide.add_column(name)
    wide.add_row("judge", "anthropic:claude-haiku-4-5", "240", "106,328", "19,200", "$0.2023", "$0.1012",
                 "1m00s", "48,458", "INCONCLUSIVE")
    con = Console(width=80, file=StringIO(), color_system=None)
    assert not fits(con, wide, 80)
    con.print(as_records(wide))
    shown = con.file.getvalue()  # type: ignore[attr-defined]
    for value in ("anthropic:claude-haiku-4-5", "106,328", "$0.2023", "48,458", "INCONCLUSIVE"):
        assert value in shown
    narrow = Table()
    narrow.add_column("judge")
    narrow.add_column("n")
    narrow.add_row("sim:x", "60")
    assert fits(con, narrow, 80)


# 4 --------------------------------------------------------------------------------------------------


def test_4_m_rewardbench_conditions_narrow_the_languages_and_a_partial_snapshot_is_listed(
    tmp_path: Path,
) -> None:
    from tests.data.rewardbench_fixture import write_snapshot

    snapshot = write_snapshot(tmp_path / "hub", languages=("zh", "ja"))
    run = tmp_path / "run"
    code, out = invoke("run", "--run", str(run), "--dataset", "m-rewardbench", "--data-dir", str(snapshot),
                       "--conditions", "zh,ja", "--model", "sim:unbiased", "--yes")
    assert code == 0, out
    assert "lacks" not in out
    manifest = (run / "manifest.json").read_text(encoding="utf-8")
    assert '"m-rewardbench:zh,ja"' in manifest
    code, out = invoke("data", "show", "m-rewardbench", "--data-dir", str(snapshot))
    assert code == 0, out
    assert "holds 2 of its 23 languages" in out and "zh" in out and "ja" in out
    # a language the copy lacks is still a clear error, naming what it holds
    code, out = invoke("run", "--run", str(tmp_path / "r2"), "--dataset", "m-rewardbench", "--data-dir",
                       str(snapshot), "--conditions", "zh,ko", "--model", "sim:unbiased", "--dry-run")
    assert code == 1 and "lacks 1 of the 2 languages" in out and "m-rewardbench:ja,zh" in out


# 5 --------------------------------------------------------------------------------------------------


def test_5_an_error_names_only_flags_of_the_command_it_is_given_to(tmp_path: Path) -> None:
    code, out = invoke("run", "--run", str(tmp_path / "r"), "--translate", "--translator", "sim:unbiased",
                       "--model", "sim:unbiased", "--dry-run")
    assert code == 1
    assert "--translator MODEL" in out
    # --variants is translate's flag: said as part of that command, never as one of run's
    assert "--variants FILE" not in out.replace("judgebench translate --run RUN --variants FILE", "")
    code, _ = invoke("run", "--variants", "x.jsonl")
    assert code == 2  # run really has no such flag


# 6 --------------------------------------------------------------------------------------------------


def test_6_plan_judge_dry_run_and_run_dry_run_price_one_design_alike(tmp_path: Path) -> None:
    """`plan` and `judge --dry-run` gave 2,176,886 and 2,255,576 input tokens for one design: they
    planned it two ways. Now one plan (the en texts standing in for the targets') prices all three."""
    from judgebench.api import JudgeRequest, PipelineRequest, PlanRequest, judge, plan_study, run_pipeline

    models = ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5"]
    planned = plan_study(PlanRequest(models=models, dataset="sample", conditions="en,zh,ls")).estimates
    judged = judge(
        tmp_path / "j",
        JudgeRequest(models=models, dataset="sample", conditions="en,zh,ls", dry_run=True),
    ).estimates
    piped = [
        e
        for e in run_pipeline(
            tmp_path / "p",
            PipelineRequest(models=models, dataset="sample", machine_translate=True, dry_run=True),
        ).estimates
        if e.stage == "judge"
    ]

    def figures(estimates: list) -> list[tuple[object, ...]]:  # type: ignore[type-arg]
        return sorted((e.model, e.calls, e.input_tokens, e.output_tokens, e.cost_live_usd) for e in estimates)

    assert figures(planned) == figures(judged) == figures(piped)
    assert all(e.calls == 240 for e in planned)  # 30 items x (3 conditions + zh tie-probe) x 2 orders
    assert not (tmp_path / "j").exists() and not (tmp_path / "p").exists()  # a dry run writes nothing


def test_6_a_cached_rerun_announces_the_calls_it_will_pay_for(tmp_path: Path) -> None:
    """A fully cached rerun announced 6m17s and took 6 s: the announcement now looks the pending
    calls up in the response store (a sample) and times only the ones to pay for."""
    args = ["--dataset", "sample", "--conditions", "en", "--model", "sim:unbiased"]
    first = runner.invoke(app, ["judge", "--run", str(tmp_path / "a"), *args])
    assert first.exit_code == 0, first.output
    assert "already in the response cache" not in first.output
    again = runner.invoke(app, ["judge", "--run", str(tmp_path / "b"), *args])
    assert again.exit_code == 0, again.output
    assert "judge sim:unbiased: 0 calls, expected under a second" in again.output
    assert "already in the response cache (a sample of the calls): sim:unbiased 100%" in again.output
    bypass = runner.invoke(app, ["judge", "--run", str(tmp_path / "c"), *args, "--no-cache"])
    assert bypass.exit_code == 0 and "judge sim:unbiased: 60 calls" in bypass.output
    assert "already in the response cache" not in bypass.output


def test_6_run_dry_run_times_bbe_and_report_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bbe and report were never in the estimate (a probes run said "about 1s" for 59 s)."""
    monkeypatch.setattr("os.getloadavg", lambda: (1.2, 1.2, 1.2))
    code, out = invoke("run", "--run", str(tmp_path / "r"), "--model", "sim:unbiased", "--dry-run")
    assert code == 0, out
    assert re.search(r"│ bbe +│ \(no calls\)", out) and re.search(r"│ report +│ \(no calls\)", out)
    told = re.search(r"expected time: about (\S+) \(judge <1s, bbe (\S+), report (\S+)\)", out)
    assert told is not None, out
    assert told[2] == "3s" and told[3] == "6s"  # 3.1 s + 240 judgments, 5.6 s + 240 at the measured load
    monkeypatch.setattr("os.getloadavg", lambda: (5.0, 5.0, 5.0))
    code, out = invoke("run", "--run", str(tmp_path / "r"), "--model", "sim:unbiased", "--dry-run")
    assert "bbe 8s, report 15s" in out  # x2.7: (5 + 1) / 2 cores against (1.2 + 1) / 2 measured


# 3 --------------------------------------------------------------------------------------------------


def test_3_the_embedded_translator_is_timed_by_the_tokens_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--translator local --limit 2` said "about 30s" (15 s a call, assumed) and took 11m30s: a
    translation's reply is as long as its source. Now the measured seconds per output token time it,
    so longer items take longer, and the line names the measurement."""
    monkeypatch.setattr("os.getloadavg", lambda: (2.6, 2.6, 2.6))
    code, short = invoke("translate", "--run", str(tmp_path / "s"), "--dataset", "sample",
                         "--translator", "local", "--limit", "2", "--dry-run")
    assert code == 0, short
    assert "0.19 s per output token" in short
    told = re.search(r"expected time: about (\S+) \(translate", short)
    assert told is not None and told[1] == "37s"  # 196 output tokens x 0.19 s
    long_items = tmp_path / "long.jsonl"
    text = "A long answer with many words in it. " * 40
    long_items.write_text(
        "\n".join(
            f'{{"id": "q{i}", "instruction": "Explain {i}.", "output_1": "{text}", "output_2": "{text}x", '
            f'"label": 1}}'
            for i in range(2)
        )
        + "\n"
    )
    code, out = invoke("translate", "--run", str(tmp_path / "l"), "--dataset", str(long_items),
                       "--translator", "local", "--dry-run")
    assert code == 0, out
    longer = re.search(r"expected time: about (\S+) \(translate", out)
    assert longer is not None and "m" in longer[1]  # minutes, not seconds


# 6: the embedded judge's estimate, against a small run (scripts/estimate_check.py measures the time;
# these check what holds without a clock) -------------------------------------------------------------


def _rates_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **values: float) -> None:
    """configs/call_seconds.toml with the local judge's measured figures replaced by `values`."""
    from judgebench.costing import durations

    text = durations.table_path().read_text(encoding="utf-8")
    judge = text.index('judge = "local"\nstage = "judge"')
    head, entry = text[:judge], text[judge:]
    for key, value in values.items():
        entry, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", entry, count=1, flags=re.M)
        assert n == 1, key
    path = tmp_path / "call_seconds.toml"
    path.write_text(head + entry, encoding="utf-8")
    monkeypatch.setattr(durations, "table_path", lambda: path)


def test_6_the_embedded_judges_call_is_timed_by_its_prompt_tokens_and_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick start announced 8m41s and took 15m07s at load 4-5: one flat 0.69 s a call, scaled
    ((load + 1) / cores) squared. A call's time is now its prompt and reply tokens at the measured
    prefill and decode rates, and the load exponent is the measured one."""
    from judgebench.costing import durations
    from judgebench.models import Judges

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (10.8, 10.8, 10.8))  # the measurement's own load
    local = Judges.load().resolve("local")
    entry = next(e for e in durations.load_rates().measured if e.judge == "local" and e.stage == "judge")
    short = durations.expected("local", local.spec, local.settings, 10, "judge", input_tokens=1000)
    long = durations.expected("local", local.spec, local.settings, 10, "judge", input_tokens=5000)
    assert long.per_call - short.per_call == pytest.approx(400 * entry.seconds_per_input_token)
    assert "s per prompt token, 500 a call" in long.source
    monkeypatch.setattr("os.getloadavg", lambda: (4.5, 4.5, 4.5))
    busy = durations.expected("local", local.spec, local.settings, 10, "judge", input_tokens=1000)
    factor = ((4.5 + 1) / (10.8 + 1)) ** entry.load_exponent
    assert busy.per_call == pytest.approx(short.per_call * factor)
    # the quick start at load 4.5: 240 calls of about 300 prompt tokens and 2 output tokens took
    # 15m07s (3.8 s a call); the old flat figure said 2.2 s, this one says within 20% of 3.8 s
    quick = durations.expected("local", local.spec, local.settings, 240, "judge", input_tokens=240 * 300,
                               output_tokens=480)  # fmt: skip
    assert abs(quick.per_call - 907 / 240) < 0.2 * 907 / 240


def test_6_the_embedded_judges_estimate_follows_the_measured_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run's and the announcement's per-call seconds come from configs/call_seconds.toml (what
    scripts/measure_call_seconds.py measured): doubling the prefill rate and the per-call figure
    doubles the time; an uncached run counts every planned call."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (10.8, 10.8, 10.8))
    args = ["judge", "--dataset", "sample", "--conditions", "en", "--model", "local", "--limit", "3"]
    code, base = invoke(*args, "--run", str(tmp_path / "a"), "--dry-run")
    assert code == 0, base
    calls = re.search(r"judge +│ local +│ +(\d+)", base)
    seconds = re.search(r"expected time: about (\S+)", base)
    assert calls is not None and int(calls[1]) == 6 and seconds is not None, base  # 3 items x 2 orders
    _rates_with(tmp_path, monkeypatch, seconds_per_call=4.76, seconds_per_input_token=0.0508,
                seconds_per_output_token=4.46)  # fmt: skip
    code, doubled = invoke(*args, "--run", str(tmp_path / "b"), "--dry-run")
    again = re.search(r"expected time: about (\S+)", doubled)
    assert again is not None, doubled

    def secs(text: str) -> int:
        m = re.fullmatch(r"(?:(\d+)m)?(\d+)s", text)
        assert m is not None, text
        return int(m[1] or 0) * 60 + int(m[2])

    assert secs(again[1]) == pytest.approx(2 * secs(seconds[1]), abs=2)  # a judge dry run: judging only


def test_6_run_limit_1_reports(tmp_path: Path) -> None:
    """`run --limit 1` (scripts/estimate_check.py's small run) crashed in the report: one item's
    longer side made a categorical of one category, which pandas refuses to compare."""
    run = str(tmp_path / "r")
    code, out = invoke("run", "--run", run, "--model", "sim:selftest-unbiased", "--limit", "1", "--yes")
    assert code == 0, out
