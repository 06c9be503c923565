"""The client core: cache and resume, key hygiene, offline guard, limits, budget, progress."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench.errors import ProviderConfigError
from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import Budget, CallResult, ModelClient, RateLimiter
from judgebench.models.pricing import Price, PriceTable
from judgebench.progress import ProgressReporter
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, error_body

REPO = Path(__file__).resolve().parents[2]
PLANTED = "sk-test-PLANTED-123"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv  # type: ignore[misc]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-client")


def settings(server: OpenAIServer, **kw: Any) -> ProviderSettings:
    opts: dict[str, Any] = {
        "base_url": server.base_url,
        "timeout": 5.0,
        "max_retries": 3,
        "backoff_initial": 0.001,
        "backoff_max": 0.01,
        "concurrency": 4,
    }
    opts.update(kw)
    return ProviderSettings(**opts)


def requests(n: int, tag: str = "q") -> list[ModelRequest]:
    return [ModelRequest(messages=[Message(role="user", content=f"{tag} {i}")]) for i in range(n)]


async def test_cache_hit_makes_zero_requests(server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    first = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    got = await first.map(requests(10))
    await first.aclose()
    assert len(server.requests) == 10 and all(r.response is not None and not r.from_cache for r in got)

    again = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    cached = await again.map(requests(10))
    await again.aclose()
    assert len(server.requests) == 10  # not one more
    assert all(r.from_cache and r.attempts == 0 for r in cached)
    assert [r.response.text for r in cached if r.response] == [r.response.text for r in got if r.response]
    assert again.stats.cache_hits == 10 and again.stats.input_tokens == 0 and again.stats.cost_usd == 0.0


async def test_cached_answers_need_no_key(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    client = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    await client.map(requests(3))
    await client.aclose()
    monkeypatch.delenv("OPENAI_API_KEY")
    replay = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    assert all(r.from_cache for r in await replay.map(requests(3)))
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        await replay.call(requests(1, "new")[0])


async def test_the_key_covers_parameters_and_endpoint(server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    client = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    base = ModelRequest(messages=[Message(role="user", content="x")])
    keys = {
        client.key_for(base),
        client.key_for(base.model_copy(update={"temperature": 0.7})),
        client.key_for(base.model_copy(update={"max_tokens": 5})),
        client.key_for(base.model_copy(update={"response_format": "json"})),
        ModelClient("openai:gpt-4.1", settings(server), cache=cache).key_for(base),
        ModelClient(
            "openai:gpt-4.1-mini", settings(server, base_url="http://127.0.0.1:1/v1"), cache=cache
        ).key_for(base),
    }
    assert len(keys) == 6
    # the stage's context is not sent, so it does not change the key
    assert client.key_for(base.model_copy(update={"context": {"item_id": "x"}})) == client.key_for(base)


async def test_use_cache_false_bypasses_reads_but_still_writes(server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    for _ in range(2):
        client = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache, use_cache=False)
        results = await client.map(requests(3))
        await client.aclose()
        assert not any(r.from_cache for r in results)
    assert len(server.requests) == 6 and len(cache) == 3


async def test_errors_are_never_cached(server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    server.responder = lambda _r: Reply(status=500, body=error_body("down"))
    client = ModelClient("openai:gpt-4.1-mini", settings(server, max_retries=2), cache=cache)
    failed = await client.call(requests(1)[0])
    assert failed.response is None and len(cache) == 0
    server.responder = None
    ok = await client.call(requests(1)[0])
    await client.aclose()
    assert ok.response is not None and not ok.from_cache and len(cache) == 1


async def test_resumed_run_repeats_no_call(server: OpenAIServer, tmp_path: Path) -> None:
    """Cancel a run after N answers; the rerun requests exactly the calls never received."""
    total, stop_after = 24, 7
    server.delay = 0.02
    cache = ResponseCache(tmp_path / "r.sqlite")
    received: list[int] = []
    first = ModelClient("openai:gpt-4.1-mini", settings(server, concurrency=3), cache=cache)
    task: asyncio.Task[list[CallResult]] | None = None

    def on_result(index: int, result: CallResult) -> None:
        assert result.cache_key in cache  # stored before the caller hears of it
        received.append(index)
        if len(received) == stop_after and task is not None:
            task.cancel()

    task = asyncio.create_task(first.map(requests(total), on_result=on_result))
    with pytest.raises(asyncio.CancelledError):
        await task
    await first.aclose()
    await settle(server)  # requests the cancelled run had sent may still be landing
    # an answer whose commit was under way at the cancel is stored though never reported
    stored = len(cache)
    assert len(received) >= stop_after and stored >= len(received)

    server.requests.clear()
    server.successes = 0
    second = ModelClient("openai:gpt-4.1-mini", settings(server, concurrency=3), cache=cache)
    results = await second.map(requests(total))
    await second.aclose()
    assert len(results) == total and all(r.response is not None for r in results)
    assert server.successes == total - stored == len(server.requests)
    assert second.stats.status_counts == {"ok": total - stored}
    assert sum(r.from_cache for r in results) == stored
    assert set(received) <= {i for i, r in enumerate(results) if r.from_cache}


async def settle(server: OpenAIServer) -> None:
    """Wait until the server has seen no new request for a few polls."""
    stable, last = 0, -1
    while stable < 4:
        await asyncio.sleep(0.05)
        stable = stable + 1 if len(server.requests) == last else 0
        last = len(server.requests)


_CHILD = """
import asyncio, sys
from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient

async def main():
    client = ModelClient("openai:gpt-4.1-mini", ProviderSettings(base_url=sys.argv[1], concurrency=2),
                         cache=ResponseCache(sys.argv[2]))
    reqs = [ModelRequest(messages=[Message(role="user", content=f"k {i}")]) for i in range(int(sys.argv[3]))]
    def on_result(i, r):
        print(i, flush=True)
    await client.map(reqs, on_result=on_result)

asyncio.run(main())
"""


async def test_kill_9_loses_no_received_answer(server: OpenAIServer, tmp_path: Path) -> None:
    total = 40
    server.delay = 0.03
    store = tmp_path / "r.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, server.base_url, str(store), str(total)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    printed = [int(child.stdout.readline()) for _ in range(6)]
    child.send_signal(signal.SIGKILL)
    child.wait()
    await settle(server)
    assert len(server.requests) < total  # killed midway

    cache = ResponseCache(store)  # readable after the kill
    stored = len(cache)
    server.requests.clear()
    server.successes = 0
    client = ModelClient("openai:gpt-4.1-mini", settings(server, concurrency=2), cache=cache)
    reqs = [ModelRequest(messages=[Message(role="user", content=f"k {i}")]) for i in range(total)]
    results = await client.map(reqs)
    await client.aclose()
    assert all(results[i].from_cache for i in printed)  # every answer the child reported was kept
    assert len(server.requests) == total - stored


async def test_planted_key_is_written_nowhere(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    cache_dir = Path(os.environ["JUDGEBENCH_CACHE_DIR"])
    replies: list[Reply | None] = [
        None,
        Reply(status=401, body=error_body(f"Incorrect API key provided: {PLANTED}")),
        Reply(status=400, body=error_body(f"bad request for key {PLANTED}")),
        Reply(status=500, body=error_body("down")),
    ]

    def responder(_r: SeenRequest) -> Reply | None:
        return replies.pop(0) if replies else None

    server.responder = responder
    client = ModelClient(
        "openai:gpt-4.1-mini", settings(server, max_retries=0, concurrency=1)
    )  # default store
    results = await client.map(requests(6))
    await client.aclose()
    assert server.requests[0].headers["authorization"] == f"Bearer {PLANTED}"  # the key was really used
    assert sum(r.response is None for r in results) == 3
    out = tmp_path / "results.jsonl"
    out.write_text("\n".join(r.model_dump_json() for r in results) + "\n" + client.stats.model_dump_json())
    written = [p for root in (cache_dir, tmp_path) for p in root.rglob("*") if p.is_file()]
    assert any(p.name.startswith("responses.sqlite") for p in written)
    for path in written:
        assert PLANTED.encode() not in path.read_bytes(), path


async def test_offline_guard_blocks_real_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert os.environ.get("JUDGEBENCH_OFFLINE_TESTS") == "1"
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-ds")
    for spec in ("openai:gpt-4.1-mini", "deepseek:deepseek-v4-flash"):
        client = ModelClient(
            spec, ProviderSettings(max_retries=3), cache=ResponseCache(tmp_path / "r.sqlite")
        )
        result = await client.call(requests(1)[0])
        await client.aclose()
        assert result.response is None and result.attempts == 0 and result.refused == "offline"
        assert result.error is not None and "real model request blocked in tests" in result.error
    # OPENAI_BASE_URL pointing elsewhere is blocked too
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.com/v1")
    client = ModelClient("openai:gpt-4.1-mini", cache=ResponseCache(tmp_path / "r.sqlite"))
    blocked = await client.call(requests(1)[0])
    assert blocked.error is not None and "example.com" in blocked.error


def test_rate_limiter_spaces_requests_evenly(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    limiter = RateLimiter(rpm=600)  # one slot every 0.1 s
    slots = [limiter.reserve() for _ in range(5)]
    assert slots == pytest.approx([100.0, 100.1, 100.2, 100.3, 100.4])
    clock[0] = 200.0  # idle time is not banked into a burst
    assert limiter.reserve() == pytest.approx(200.0) and limiter.reserve() == pytest.approx(200.1)
    limiter.pause(5.0)  # a 429's Retry-After holds everyone
    assert limiter.reserve() == pytest.approx(205.0)

    tokens = RateLimiter(tpm=6000)  # 100 tokens per second
    assert tokens.reserve(50) == pytest.approx(200.0)
    assert tokens.reserve(50) == pytest.approx(200.5)
    assert tokens.reserve(10) == pytest.approx(201.0)


async def test_rpm_limit_paces_the_server_sees_no_burst(server: OpenAIServer, tmp_path: Path) -> None:
    stamps: list[float] = []

    def responder(_r: SeenRequest) -> None:
        stamps.append(time.monotonic())
        return None

    server.responder = responder
    client = ModelClient(
        "openai:gpt-4.1-mini",
        settings(server, concurrency=8, rpm=1200),  # 20/s: 50 ms apart
        cache=ResponseCache(tmp_path / "r.sqlite"),
    )
    await client.map(requests(6))
    await client.aclose()
    # Without the limiter 8 workers would send all 6 at once (all within a few ms). With it they
    # leave 50 ms apart; what the server sees also carries each request's own scheduling delay on
    # a loaded machine, so the check is on spans, which one late request cannot close up: the six
    # span at least half their five intervals, and any three at least a third of their two.
    assert stamps[-1] - stamps[0] > 0.125
    assert min(c - a for a, c in zip(stamps, stamps[2:], strict=False)) > 0.033


async def test_concurrency_is_bounded_and_shared_per_endpoint(server: OpenAIServer, tmp_path: Path) -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def responder(_r: SeenRequest) -> None:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1
        return None

    server.responder = responder
    cache = ResponseCache(tmp_path / "r.sqlite")
    one = ModelClient("openai:gpt-4.1-mini", settings(server, concurrency=3), cache=cache)
    two = ModelClient("openai:gpt-4.1", settings(server, concurrency=3), cache=cache)
    await asyncio.gather(one.map(requests(12, "a")), two.map(requests(12, "b")))
    await one.aclose()
    await two.aclose()
    assert len(server.requests) == 24
    assert state["max"] <= 3  # two clients, one endpoint, one budget of 3


async def test_on_result_is_called_as_each_finishes(server: OpenAIServer, tmp_path: Path) -> None:
    slow = {"slow 0"}

    def responder(r: SeenRequest) -> None:
        if r.body["messages"][0]["content"] in slow:
            time.sleep(0.2)
        return None

    server.responder = responder
    order: list[int] = []
    client = ModelClient(
        "openai:gpt-4.1-mini", settings(server, concurrency=4), cache=ResponseCache(tmp_path / "r")
    )
    results = await client.map(requests(4, "slow"), on_result=lambda i, r: order.append(i))
    await client.aclose()
    assert sorted(order) == [0, 1, 2, 3] and order[-1] == 0  # the slow one reported last
    assert [r.cache_key for r in results] == [client.key_for(q) for q in requests(4, "slow")]  # input order


async def test_budget_refuses_calls_past_the_cap(server: OpenAIServer, tmp_path: Path) -> None:
    # 1 USD per token: each call reserves 1 + 10 dollars (input estimate, max_tokens) and costs 11 + 3
    prices = PriceTable({"openai": {"gpt-4.1-mini": Price(input=1e6, output=1e6)}})
    budget = Budget(max_cost_usd=38.0)
    client = ModelClient(
        "openai:gpt-4.1-mini",
        settings(server, concurrency=1),
        cache=ResponseCache(tmp_path / "r.sqlite"),
        prices=prices,
        budget=budget,
    )
    results = [await client.call(q.model_copy(update={"max_tokens": 10})) for q in requests(4)]
    await client.aclose()
    paid = [r for r in results if r.response is not None]
    refused = [r for r in results if r.error and r.error.startswith("BudgetExceeded")]
    assert len(paid) == 2 and len(refused) == 2
    assert [r.refused for r in results] == [None, None, "budget", "budget"]  # typed, beside the text
    assert len(server.requests) == 2 and budget.spent_usd == pytest.approx(28.0)
    assert client.stats.budget_refusals == 2 and client.stats.cost_usd == pytest.approx(28.0)


async def test_stats_and_progress_account_for_every_call(server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    warm = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    await warm.map(requests(2))
    await warm.aclose()
    server.responder = lambda r: (
        Reply(status=400, body=error_body("no")) if r.body["messages"][0]["content"] == "q 4" else None
    )
    client = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache, prices=PriceTable({}))
    with ProgressReporter(5, "test", enabled=False) as bar:
        await client.map(requests(5), progress=bar)
    await client.aclose()
    s = client.stats
    assert (s.calls, s.cache_hits, s.failures) == (5, 2, 1)
    assert (s.input_tokens, s.output_tokens) == (22, 6)  # two paid answers of 11 + 3 tokens
    assert s.unpriced_calls == 2 and s.status_counts == {"ok": 2, "400": 1}
    assert (bar.done, bar.cached, bar.failed, bar.tokens) == (5, 2, 1, 28)
    assert bar.cost is None  # an unpriced answer makes the total unknown, not zero


async def test_refresh_skips_the_stored_answer_and_replaces_it(server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    client = ModelClient("openai:gpt-4.1-mini", settings(server), cache=cache)
    (q,) = requests(1)
    await client.call(q)
    server.text = "B"
    fresh = await client.call(q, refresh=True)
    again = await client.call(q)
    await client.aclose()
    assert fresh.response is not None and fresh.response.text == "B" and not fresh.from_cache
    assert again.from_cache and again.response is not None and again.response.text == "B"
    assert len(server.requests) == 2


async def test_an_unclassified_adapter_error_is_a_recorded_failure(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = ModelClient("openai:gpt-4.1-mini", settings(server), cache=ResponseCache(tmp_path / "r.sqlite"))

    async def broken(_request: ModelRequest) -> Any:
        raise ValueError("adapter bug")

    monkeypatch.setattr(client.provider, "generate", broken)
    results = await client.map(requests(2))
    await client.aclose()
    assert [r.response for r in results] == [None, None]
    assert all(r.error == "openai: unexpected ValueError: adapter bug" and r.attempts == 1 for r in results)
    assert client.stats.failures == 2 and client.stats.status_counts == {"ValueError": 2}
