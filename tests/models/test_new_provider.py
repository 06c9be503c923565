"""Adding a provider is one adapter module, one `register(...)` line and a price entry: the toy
provider (tests/models/toy_provider.py) runs through the client and through the judge stage with
nothing else changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judgebench import api
from judgebench.batch import refusal
from judgebench.errors import ConfigError
from judgebench.models import ModelClient, ModelSpec, registered, traits_of
from judgebench.models.base import Message, ModelRequest
from judgebench.models.cache import ResponseCache
from judgebench.models.pricing import Price, PriceTable
from judgebench.records import Judgment
from judgebench.store.run_folder import read_jsonl
from tests.models.toy_provider import ToyProvider
from tests.natural_items import natural_items

REPO = Path(__file__).resolve().parents[2]
PRICES = PriceTable({"toy": {"m": Price(input=1.0, output=2.0)}})  # USD per 1M tokens


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(messages=[Message(role="user", content=f"question {i}")]) for i in range(n)]


async def test_the_client_maps_caches_counts_and_prices_a_new_provider(
    toy: type[ToyProvider], tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "r.sqlite")
    first = ModelClient("toy:m", cache=cache, prices=PRICES)
    results = await first.map(_requests(5))
    await first.aclose()
    assert all(r.ok and not r.from_cache and r.attempts == 1 for r in results)
    assert len(toy.sent) == 5
    usages = [r.response.usage for r in results if r.response is not None]
    expected = sum(u.input_tokens * 1.0 + u.output_tokens * 2.0 for u in usages) / 1_000_000
    stats = first.stats
    assert (stats.calls, stats.cache_hits, stats.failures, stats.unpriced_calls) == (5, 0, 0, 0)
    assert stats.input_tokens == sum(u.input_tokens for u in usages) and stats.output_tokens == 35
    assert stats.cost_usd == pytest.approx(expected) and stats.status_counts == {"ok": 5}
    assert [r.cost_usd for r in results] == pytest.approx(
        [(u.input_tokens + 2 * u.output_tokens) / 1e6 for u in usages]
    )

    again = ModelClient("toy:m", cache=cache, prices=PRICES)
    rerun = await again.map(_requests(5))
    await again.aclose()
    assert len(toy.sent) == 5  # not one more request
    assert all(r.from_cache and r.attempts == 0 for r in rerun)
    assert [r.response.text for r in rerun if r.response] == [r.response.text for r in results if r.response]
    assert (again.stats.calls, again.stats.cache_hits, again.stats.cost_usd) == (5, 5, 0.0)


def test_its_traits_are_read_from_the_class_and_it_can_be_removed(toy: type[ToyProvider]) -> None:
    assert "toy" in registered()
    assert traits_of("toy:m") is toy.traits and traits_of(ModelSpec.parse("toy:m")).in_process
    # no Batch API declared, and in process: --batch is refused for what it is, not by its name
    why = refusal("toy:m")
    assert why is not None and why.startswith("toy: ") and "'toy' runs in this process" in why


def test_unregistered_providers_are_unknown_again() -> None:
    assert "toy" not in registered()  # the fixture of the other tests removed it
    with pytest.raises(ConfigError, match="unknown provider 'toy'"):
        ModelSpec.parse("toy:m")


def _dataset(path: Path, n: int) -> Path:
    return natural_items(path, n)


def test_the_judge_stage_runs_a_new_provider(
    toy: type[ToyProvider], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the price entry: the project's configs with one more table in prices.toml
    configs = tmp_path / "configs"
    shutil.copytree(REPO / "configs", configs)
    with (configs / "prices.toml").open("a", encoding="utf-8") as prices:
        prices.write('\n[toy."m"]\ninput = 1.0\noutput = 2.0\n')
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    data = _dataset(tmp_path / "items.jsonl", 6)

    result = api.judge(tmp_path / "run", api.JudgeRequest(models=["toy:m"], dataset=str(data)))
    outcome = result.outcomes["toy:m"]
    assert result.planned == 12 and len(toy.sent) == 12  # 6 items x 2 orders, en only
    assert (outcome.verdicts, outcome.invalid, outcome.missing, outcome.provider_calls) == (12, 0, 0, 12)
    judgments = list(read_jsonl(tmp_path / "run" / "judgments.jsonl", Judgment))
    assert len(judgments) == 12 and all(j.verdict in ("1", "2") for j in judgments)
    assert all(j.cost_usd is not None and j.cost_usd > 0 for j in judgments)
    assert outcome.cost_usd == pytest.approx(sum(j.cost_usd or 0.0 for j in judgments), abs=1e-6)

    # a second run of the same judge and items is answered from the store
    second = api.judge(tmp_path / "run2", api.JudgeRequest(models=["toy:m"], dataset=str(data))).outcomes[
        "toy:m"
    ]
    assert len(toy.sent) == 12
    assert (second.cache_hits, second.provider_calls, second.verdicts) == (12, 0, 12)
