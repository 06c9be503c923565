"""Issue 41 (third hardening pass), classes 3 and 8 through `judge` against a local OpenAI-format server
(the official SDK) and real run folders and response stores: `--max-cost` is the run's cap (a rerun
does not spend it again; a reply's usage cannot lift it), and a store row that no longer validates is
a miss with a warning, not a traceback."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from judgebench import api
from judgebench.models.cache import default_cache_path
from judgebench.records import Judgment
from judgebench.store.run_folder import read_jsonl
from tests.natural_items import natural_items
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_batch_server import OpenAIBatchServer

SPEC = "openai:gpt-4.1-mini"
CAP = 0.01  # each call reserves its worst case (900 output tokens): room for a dozen or so


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-third-pass")


def _dataset(path: Path, n: int = 50) -> Path:
    return natural_items(path, n)


def _options(server: OpenAIBatchServer) -> api.CallOptions:
    return api.CallOptions(
        settings=api.SettingsOverrides(base_url=server.base_url, timeout=10, max_retries=0, concurrency=4)
    )


def _paid(run: Path) -> float:
    """USD the run's records say were paid (every line, answers from the store excepted)."""
    return sum(j.cost_usd or 0.0 for j in read_jsonl(run / "judgments.jsonl", Judgment) if not j.from_cache)


# --- 3. the budget is the run's -------------------------------------------------------------------


def test_running_the_same_command_again_does_not_spend_the_cap_again(tmp_path: Path) -> None:
    """Before: each run of `judge --max-cost 0.01` started from $0 and spent up to $0.01 more.
    Now: the budget starts at what the run already paid, so the second run sends (almost) nothing."""
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    with OpenAIBatchServer(completion_tokens=900) as server:  # answers cost what was reserved
        request = api.JudgeRequest(models=[SPEC], dataset=str(data), limit=50, max_cost=CAP)
        first = api.judge(run, request, options=_options(server))
        paid_calls = server.live_calls()
        assert first.outcomes[SPEC].missing > 0  # the cap stopped it
        same = api.JudgeRequest(models=[SPEC], limit=50, max_cost=CAP)
        for _ in range(2):
            again = api.judge(run, same, options=_options(server))
        # the room left under the cap after the first run is less than one call's reservation
        assert server.live_calls() == paid_calls
    assert _paid(run) <= CAP
    assert again.outcomes[SPEC].missing == first.outcomes[SPEC].missing
    # the other side: a larger cap on the same run pays for the rest
    with OpenAIBatchServer() as server:
        larger = api.JudgeRequest(models=[SPEC], limit=50, max_cost=1.0)
        more = api.judge(run, larger, options=_options(server))
        assert server.live_calls() == first.outcomes[SPEC].missing
    assert more.outcomes[SPEC].missing == 0 and _paid(run) <= 1.0


@pytest.mark.parametrize(
    "prompt_tokens",
    [-1_000_000, 10**15, float("inf")],
    ids=["negative", "absurd", "infinite"],
)
def test_a_reply_reporting_bad_token_counts_cannot_lift_the_cap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, prompt_tokens: Any
) -> None:
    """Before: -1,000,000 prompt tokens made each call cost about -$0.40, so the cap never bit and
    every call was paid; an infinite count crashed the parse and lost a paid answer. Now: the
    answers are kept, costed at their estimate, and the cap holds."""
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    with OpenAIBatchServer() as server:

        def lying(request: SeenRequest) -> Reply | None:
            reply = server.default_reply(request)
            if request.path.endswith("/chat/completions") and isinstance(reply.body, dict):
                reply.body["usage"]["prompt_tokens"] = prompt_tokens
                # json.dumps writes inf as Infinity, which the SDK's JSON reader takes
            return reply

        server.responder = lying
        request = api.JudgeRequest(models=[SPEC], dataset=str(data), limit=50, max_cost=CAP)
        with caplog.at_level(logging.WARNING):
            result = api.judge(run, request, options=_options(server))
        answered = server.live_calls()
    outcome = result.outcomes[SPEC]
    assert 0 < outcome.verdicts + outcome.invalid == answered < 100  # every paid answer kept; cap bit
    records = list(read_jsonl(run / "judgments.jsonl", Judgment))
    costs = [j.cost_usd for j in records if j.verdict is not None]
    assert costs and all(c is not None and c > 0 for c in costs)
    assert _paid(run) <= CAP
    assert "not a count" in caplog.text


# --- 8. a derived store that does not validate -------------------------------------------------------


def test_a_store_row_from_another_version_is_a_miss_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: a row that no longer validated as an answer raised a ValidationError traceback and
    the command judged nothing. Now: that call is asked again (its row replaced), the rest are
    served from the store, and one warning says so."""
    data = _dataset(tmp_path / "items.jsonl", n=5)
    with OpenAIBatchServer() as server:
        request = api.JudgeRequest(models=[SPEC], dataset=str(data), limit=5)
        api.judge(tmp_path / "first", request, options=_options(server))
        assert server.live_calls() == 10
        store = default_cache_path()
        with sqlite3.connect(store) as db:
            (key, row) = db.execute("SELECT key, response FROM responses LIMIT 1").fetchone()
            other_version = {**json.loads(row), "text": {"parts": ["A"]}, "usage": "12 tokens"}
            db.execute("UPDATE responses SET response = ? WHERE key = ?", (json.dumps(other_version), key))
        with caplog.at_level(logging.WARNING):
            second = api.judge(tmp_path / "second", request, options=_options(server))
        assert server.live_calls() == 11  # the unreadable row's call only
    outcome = second.outcomes[SPEC]
    assert outcome.missing == 0 and outcome.cache_hits == 9 and outcome.provider_calls == 1
    assert "cannot read" in caplog.text and key[:12] in caplog.text
    with sqlite3.connect(store) as db:
        (fixed,) = db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
    assert isinstance(json.loads(fixed)["text"], str)  # the new answer replaced the row
