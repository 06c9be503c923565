"""The response store: round trip, WAL, info/clear, and two processes writing at once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from judgebench.models.base import ModelResponse, TokenLogprob
from judgebench.models.cache import ResponseCache, default_cache, default_cache_path
from judgebench.records import Usage

REPO = Path(__file__).resolve().parents[2]


def answer(text: str) -> ModelResponse:
    return ModelResponse(
        text=text,
        finish_reason="stop",
        usage=Usage(input_tokens=12, output_tokens=2),
        logprobs=[TokenLogprob(token="A", logprob=-0.2, top={"A": -0.2, "B": -1.9})],
        latency_s=0.4,
        model="gpt-4.1-mini-2025-04-14",
        raw={"id": "x", "choices": [{"message": {"content": text}}]},
        params_sent={"model": "gpt-4.1-mini", "temperature": 0.0},
    )


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    assert cache.get("k") is None and "k" not in cache
    cache.put("k", answer("中文 A"), provider="openai", model="gpt-4.1-mini", spec="openai:gpt-4.1-mini")
    assert "k" in cache and len(cache) == 1
    assert cache.get("k") == answer("中文 A")
    cache.put("k", answer("B"), provider="openai", model="gpt-4.1-mini", spec="openai:gpt-4.1-mini")
    got = cache.get("k")
    assert got is not None and got.text == "B" and len(cache) == 1


def test_wal_mode_and_a_second_handle_sees_commits(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    one, two = ResponseCache(path), ResponseCache(path)
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    one.put("a", answer("A"), provider="p", model="m", spec="p:m")
    hit = two.get("a")
    assert hit is not None and hit.text == "A"  # committed at put, visible to another connection


def test_info_and_clear(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    for i in range(3):
        cache.put(f"a{i}", answer("A"), provider="openai", model="gpt-4.1", spec="openai:gpt-4.1")
    cache.put("b", answer("B"), provider="sim", model="default", spec="sim")
    info = cache.info()
    assert info["entries"] == 4 and info["by_model"] == {"openai:gpt-4.1": 3, "sim": 1}
    assert info["path"] == str(tmp_path / "r.sqlite") and info["size_bytes"] > 0
    assert info["oldest"] is not None and info["oldest"] <= info["newest"]
    assert cache.clear(spec="sim") == 1 and len(cache) == 3
    assert cache.clear() == 3 and len(cache) == 0 and cache.info()["entries"] == 0


def test_default_location_follows_judgebench_cache_dir() -> None:
    # conftest points JUDGEBENCH_CACHE_DIR at a private folder
    assert default_cache_path() == Path(os.environ["JUDGEBENCH_CACHE_DIR"]) / "responses.sqlite"
    with default_cache() as cache:
        cache.put("k", answer("A"), provider="p", model="m", spec="p:m")
    assert default_cache_path().exists()


_WRITER = """
import sys
from judgebench.models.base import ModelResponse
from judgebench.models.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
for i in range(int(sys.argv[3])):
    cache.put(f"{sys.argv[2]}-{i}", ModelResponse(text=str(i)), provider="p", model="m", spec="p:m")
"""


def test_two_processes_share_the_store(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    ResponseCache(path).close()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), tag, "300"], env=env, stderr=subprocess.PIPE
        )
        for tag in ("one", "two")
    ]
    for proc in writers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    cache = ResponseCache(path)
    assert len(cache) == 600
    hit = cache.get("two-299")
    assert hit is not None and hit.text == "299"


async def test_aput_commits_before_returning(tmp_path: Path) -> None:
    import asyncio

    path = tmp_path / "r.sqlite"
    cache = ResponseCache(path)
    reader = ResponseCache(path)

    async def one(i: int) -> None:
        await cache.aput(f"k{i}", answer(str(i)), provider="p", model="m", spec="p:m")
        assert f"k{i}" in reader  # committed: another connection sees it at once
        hit = cache.get(f"k{i}")
        assert hit is not None and hit.text == str(i)

    await asyncio.gather(*(one(i) for i in range(200)))
    assert len(reader) == 200
    cache.close()


def test_get_picks_up_other_handles_writes(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    mine, theirs = ResponseCache(path), ResponseCache(path)
    mine.REFRESH_S = 0.0  # refresh at every get (the default waits up to half a second)
    assert mine.get("x") is None
    theirs.put("x", answer("X"), provider="p", model="m", spec="p:m")
    hit = mine.get("x")
    assert hit is not None and hit.text == "X"
    theirs.clear()
    assert mine.get("x") is None and "x" not in mine
    theirs.put("y", answer("Y"), provider="p", model="m", spec="p:m")  # rowids restart after a clear
    again = mine.get("y")
    assert again is not None and again.text == "Y"
    assert ResponseCache(path).get("y") is not None  # a fresh handle sees everything at once
