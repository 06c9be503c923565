#!/usr/bin/env python3
"""Benchmark the model client against a local server that answers every call after 100 ms.

Prints, at concurrency 16 and 64: calls/s achieved by `ModelClient.map`, its ratio to the limit
(concurrency / latency) and to a bare loop of the official SDK's AsyncOpenAI against the same
server in the same process (the real ceiling: on few cores the SDK's own CPU cost binds). Then a
run with a requests-per-minute limit against a server that enforces it (token bucket of rpm/60 per
second, one second of burst): achieved/limit and the 429s the server sent.

The server is asyncio with hand-written HTTP/1.1 keep-alive, in its own process, so that it neither
binds first nor competes with the client for the GIL. Usage: `python scripts/bench_client.py`
(`--rounds`, `--calls-per-slot`, `--rpm`, `--rpm-seconds` to change the sizes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LATENCY = 0.100


# --- the server (runs in a child process) ---------------------------------------------------------


class _Bucket:
    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate)  # one second of burst
        self.tokens = self.capacity
        self.last = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


async def _serve(latency: float) -> None:
    stats = {"requests": 0, "ok": 0, "429": 0}
    bucket: list[_Bucket | None] = [None]
    counter = [0]

    def body_for(model: str) -> bytes:
        counter[0] += 1
        return json.dumps(
            {
                "id": f"chatcmpl-{counter[0]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": '{"winner": "A"}', "refusal": None},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128},
            }
        ).encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                _method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length", "0"))
                raw = await reader.readexactly(length) if length else b""
                extra = ""
                if path.startswith("/control"):
                    cmd = json.loads(raw or b"{}")
                    if "rpm" in cmd:
                        bucket[0] = _Bucket(cmd["rpm"] / 60.0) if cmd["rpm"] else None
                    if cmd.get("reset"):
                        stats.update(requests=0, ok=0, **{"429": 0})
                    status, payload = 200, json.dumps(stats).encode()
                else:
                    stats["requests"] += 1
                    if bucket[0] is not None and not bucket[0].take():
                        stats["429"] += 1
                        status = 429
                        payload = json.dumps(
                            {"error": {"message": "Rate limit reached", "code": "rate_limit"}}
                        ).encode()
                        extra = "retry-after: 1\r\n"
                    else:
                        await asyncio.sleep(latency)
                        try:
                            model = json.loads(raw).get("model", "m")
                        except ValueError:
                            model = "m"
                        status, payload = 200, body_for(model)
                        stats["ok"] += 1
                reason = "OK" if status == 200 else "Too Many Requests"
                writer.write(
                    (
                        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
                        f"content-length: {len(payload)}\r\n{extra}connection: keep-alive\r\n\r\n"
                    ).encode()
                    + payload
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


# --- the client side --------------------------------------------------------------------------------


async def _control(base: str, **cmd: Any) -> dict[str, Any]:
    import httpx

    async with httpx.AsyncClient() as http:
        r = await http.post(f"{base}/control", json=cmd)
        result: dict[str, Any] = r.json()
        return result


def _messages(tag: str, i: int) -> list[Any]:
    return [
        {"role": "system", "content": "You are a careful judge. Answer with JSON."},
        {"role": "user", "content": f"Which output follows the instruction better? call {tag}-{i}"},
    ]


async def bare_loop(base_url: str, concurrency: int, n: int, tag: str) -> tuple[float, float]:
    """The ceiling: the official SDK's async client, `concurrency` workers, nothing else."""
    import openai

    client = openai.AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0, timeout=30)
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            await client.chat.completions.create(
                model="gpt-4.1-mini",
                messages=_messages(tag, i),
                max_completion_tokens=50,
                temperature=0,
                response_format={"type": "json_object"},  # the same parameters the client sends
            )

    await client.chat.completions.create(
        model="gpt-4.1-mini", messages=_messages(tag, -1), max_completion_tokens=5
    )  # type: ignore[arg-type]
    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    await client.close()
    return n / elapsed, cpu / n


async def client_run(
    base_url: str, concurrency: int, n: int, tag: str, cache_path: Path, rpm: float | None = None
) -> tuple[float, float, Any]:
    from judgebench.models.base import Message, ModelRequest, ProviderSettings
    from judgebench.models.cache import ResponseCache
    from judgebench.models.client import ModelClient
    from judgebench.models.pricing import PriceTable

    settings = ProviderSettings(
        base_url=base_url, concurrency=concurrency, rpm=rpm, timeout=30, max_retries=8
    )
    cache = ResponseCache(cache_path)
    client = ModelClient(
        "openai:gpt-4.1-mini", settings, cache=cache, prices=PriceTable.load(), name=f"bench-{tag}"
    )
    requests = [
        ModelRequest(
            messages=[Message(**m) for m in _messages(tag, i)], max_tokens=50, response_format="json"
        )  # type: ignore[arg-type]
        for i in range(n)
    ]
    await client.call(
        ModelRequest(messages=[Message(**m) for m in _messages(tag, -1)], max_tokens=5)  # type: ignore[arg-type]
    )
    received = [0]

    def on_result(_i: int, result: Any) -> None:
        received[0] += result.response is not None

    start, cpu = time.perf_counter(), time.process_time()
    await client.map(requests, on_result=on_result)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    stats = client.stats
    await client.aclose()
    cache.close()
    if received[0] != n:
        raise SystemExit(f"client run {tag}: only {received[0]} of {n} answers")
    return n / elapsed, cpu / n, stats


async def bench(args: argparse.Namespace, base: str) -> int:
    base_url = f"{base}/v1"
    tmp = Path(tempfile.mkdtemp(prefix="jb-bench-"))
    ok = True
    print(
        f"server latency {LATENCY * 1000:.0f} ms; cpus {os.cpu_count()}; load average "
        f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds of bare loop and client, order alternating"
    )
    for concurrency in (16, 64):
        n = concurrency * args.calls_per_slot
        limit = concurrency / LATENCY
        bare: list[tuple[float, float]] = []
        ours: list[tuple[float, float]] = []
        for r in range(args.rounds):
            for which in ("bare", "client") if r % 2 == 0 else ("client", "bare"):
                tag = f"{which}{concurrency}-{r}"
                if which == "bare":
                    bare.append(await bare_loop(base_url, concurrency, n, tag))
                else:
                    rate, cpu, _ = await client_run(base_url, concurrency, n, tag, tmp / f"{tag}.sqlite")
                    ours.append((rate, cpu))
        b_best = max(x[0] for x in bare)
        c_best = max(x[0] for x in ours)
        # Two views that tolerate a machine shared with other work: best of the rounds (each side's
        # ceiling, as timeit takes the fastest run) and the median of paired rounds (each client
        # round against the bare round run beside it). The target is checked on the best of rounds.
        best_ratio = c_best / b_best
        paired = statistics.median(o[0] / w[0] for o, w in zip(ours, bare, strict=True))
        cpu_ratio = statistics.median(o[1] / w[1] for o, w in zip(ours, bare, strict=True))
        ok &= best_ratio >= 0.95
        print(
            f"concurrency {concurrency:3d} ({n} calls/round): client {c_best:6.1f} calls/s = "
            f"{c_best / limit:.3f} of limit {limit:.0f}/s; bare SDK loop {b_best:6.1f} calls/s = "
            f"{b_best / limit:.3f} of limit; client/bare = {best_ratio:.3f} (best of rounds); "
            f"paired median {paired:.3f}; CPU per call client/bare {cpu_ratio:.3f}"
        )
        print(
            "    rounds client/bare calls/s: "
            + ", ".join(f"{o[0]:.0f}/{w[0]:.0f}" for o, w in zip(ours, bare, strict=True))
        )

    rpm = args.rpm
    n = int(rpm / 60.0 * args.rpm_seconds)
    await _control(base, rpm=rpm, reset=True)
    rate, _, stats = await client_run(base_url, 64, n, "rpm", tmp / "rpm.sqlite", rpm=rpm)
    server = await _control(base, rpm=0)
    achieved = rate * 60.0
    ratio = achieved / rpm
    ok &= ratio >= 0.95 and server["429"] == 0
    print(
        f"rpm limit {rpm:.0f} ({n} calls, concurrency 64, server token bucket {rpm / 60:.0f}/s, 1 s burst): "
        f"achieved {achieved:.0f} rpm = {ratio:.3f} of limit; 429s sent by server: {server['429']}; "
        f"client retries {stats.retries}"
    )
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls-per-slot", type=int, default=25, help="calls = concurrency x this")
    parser.add_argument("--rpm", type=float, default=3000.0)
    parser.add_argument("--rpm-seconds", type=float, default=12.0)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(LATENCY))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    os.environ["OPENAI_API_KEY"] = "sk-bench-local"  # the local server ignores it
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        return asyncio.run(bench(args, f"http://127.0.0.1:{port}"))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
