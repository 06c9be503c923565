"""`judgebench judge` killed with SIGKILL at random points resumes to a clean run's metrics, repeats
no successful call outside the INTERFACE tolerance, and leaves a readable run folder and cache."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgebench import api
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, RunDir, read_jsonl
from tests.e2e.helpers import (
    FAST_JUDGE,
    DeterministicJudge,
    metrics_by_key,
    private_configs,
    same_metrics,
    write_items,
    write_variants,
)
from tests.servers.openai_server import OpenAIServer

ITEMS = 20
PLANNED = ITEMS * 8
KILLS = 4
# INTERFACE: a call whose answer reached the client more than one second before the kill is never
# requested again.
TOLERANCE_S = 1.0
STARTUP_S = 0.2


def _command(run: Path, base_url: str) -> list[str]:
    """`judgebench judge ...` in a fresh interpreter (this one's, so the same installation)."""
    return [
        sys.executable,
        "-c",
        "from judgebench.cli import main; main()",
        "judge",
        "--run",
        str(run),
        "--model",
        FAST_JUDGE,
        "--base-url",
        base_url,
        "--concurrency",
        "4",
        "--timeout",
        "10",
    ]


def _check_readable(run: Path, cache: Path) -> int:
    """What a kill may leave: whole records (a torn last line is skipped), a manifest, a sane store."""
    records = list(read_jsonl(run / JUDGMENTS, Judgment))
    manifest = RunDir(run).load_manifest()
    assert manifest is not None and manifest.dataset is not None and manifest.dataset.items == ITEMS
    store = cache / "responses.sqlite"
    if store.exists():
        conn = sqlite3.connect(store)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        finally:
            conn.close()
    return len(records)


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(private_configs(tmp_path / "configs", concurrency=4)))
    items = write_items(tmp_path / "items.jsonl", ITEMS)
    variants = write_variants(items, tmp_path / "variants.jsonl")

    # the clean reference, in process
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache-clean"))
    clean = tmp_path / "clean"
    api.translate(clean, api.TranslateRequest(dataset=str(items), variants_file=variants))
    server = OpenAIServer(DeterministicJudge())
    with server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=10), progress=False
        )
        api.judge(clean, api.JudgeRequest(models=[FAST_JUDGE]), options=options)
    api.report(clean)

    cache = tmp_path / "cache-killed"
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(cache))
    run = tmp_path / "killed"
    api.translate(run, api.TranslateRequest(dataset=str(items), variants_file=variants))
    rng = random.Random(7)
    targets = sorted(rng.sample(range(10, PLANNED - 30), KILLS))
    judge = DeterministicJudge(delay=0.03)
    spawns: list[float] = []
    kills: list[float] = []
    log: list[str] = []
    env = dict(os.environ)
    server = OpenAIServer(judge)
    with server:
        for target in targets:
            spawns.append(time.monotonic())
            proc = subprocess.Popen(
                _command(run, server.base_url), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            deadline = time.monotonic() + 120
            while sum(len(v) for v in judge.answered.values()) < target and proc.poll() is None:
                assert time.monotonic() < deadline, "the judge process made no progress"
                time.sleep(0.002)
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            proc.send_signal(signal.SIGKILL)
            kills.append(time.monotonic())
            proc.wait(timeout=30)
            if proc.stderr:
                proc.stderr.close()
            assert proc.returncode == -signal.SIGKILL
            log.append(f"kill at {target} answers: {_check_readable(run, cache)} records")
        spawns.append(time.monotonic())
        final = subprocess.run(
            _command(run, server.base_url), env=env, capture_output=True, text=True, timeout=300
        )
        assert final.returncode == 0, final.stderr
    assert _check_readable(run, cache) >= PLANNED

    # Every distinct prompt was answered at most once, or (tolerated) its first answer was still in
    # flight less than TOLERANCE_S before the kill of the process that asked: that process had not
    # received and stored it. A request belongs to the last process started STARTUP_S before it
    # arrived (no process can import judgebench and send a request sooner; answers to a killed
    # process's last requests may arrive a few ms after its kill, long before its successor asks).
    repeats = judge.repeats()
    gaps = []
    for times in repeats.values():
        first = times[0]
        process = max(i for i, spawned in enumerate(spawns) if spawned + STARTUP_S <= first)
        assert process < len(kills), "a call answered in the last, unkilled process was asked again"
        gaps.append(kills[process] - (first + judge.delay))
    log.append(f"repeated successful calls: {len(repeats)}; seconds before the kill: {sorted(gaps)}")
    (tmp_path / "kill_log.json").write_text(json.dumps(log, indent=1))
    print("\n".join(log))
    assert all(g < TOLERANCE_S for g in gaps), log
    assert len(judge.answered) == PLANNED  # every planned call answered at least once

    api.report(run)
    assert same_metrics(metrics_by_key(run), metrics_by_key(clean)) == []
