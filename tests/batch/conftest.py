"""Shared pieces for the batch tests: requests shaped like judge calls, prices, clients on local servers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judgebench.models.base import Message, ModelRequest, ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import CallResult, ModelClient
from judgebench.models.pricing import Price, PriceTable

OPENAI_MODEL = "gpt-4.1-mini"
ANTHROPIC_MODEL = "claude-haiku-4-5"

PRICES = PriceTable(
    {
        "openai": {OPENAI_MODEL: Price(input=0.40, output=1.60, batch_input=0.20, batch_output=0.80)},
        "anthropic": {ANTHROPIC_MODEL: Price(input=1.0, output=5.0, batch_input=0.5, batch_output=2.5)},
    }
)


def warned(caplog: pytest.LogCaptureFixture) -> str:
    """What the batch runner warned (the CLI shows these lines on stderr; the library only logs)."""
    return "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("judgebench.batch"))


def judge_requests(n: int, *, tag: str = "") -> list[ModelRequest]:
    """`n` distinct judge-like calls (system + user, strict JSON, temperature 0)."""
    return [
        ModelRequest(
            messages=[
                Message(
                    role="system", content="You judge instruction following only. Answer in strict JSON."
                ),
                Message(
                    role="user", content=f"{tag}Instruction {i}\nOutput (a): answer {i}a\nOutput (b): {i}b"
                ),
            ],
            response_format="json",
            max_tokens=900,
        )
        for i in range(n)
    ]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch")


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    store = ResponseCache(tmp_path / "cache" / "responses.sqlite")
    yield store
    store.close()


def make_client(spec: str, base_url: str, cache: ResponseCache, **settings: Any) -> ModelClient:
    options: dict[str, Any] = {
        "timeout": 10.0,
        "max_retries": 3,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
    }
    options.update(settings)
    return ModelClient(spec, ProviderSettings(base_url=base_url, **options), cache=cache, prices=PRICES)


class Recorder:
    """An `on_result` that remembers every call, to check each index is reported exactly once."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, CallResult]] = []

    def __call__(self, index: int, result: CallResult) -> None:
        self.calls.append((index, result))

    def indices(self) -> list[int]:
        return sorted(i for i, _ in self.calls)


def batch_state(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "batches.json").read_text(encoding="utf-8"))
    return data


async def wait_for(predicate: Callable[[], bool], *, tries: int = 2000) -> None:
    """Yield to the event loop until `predicate` holds (bounded by a number of tries, not by time)."""
    for _ in range(tries):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition never became true")
