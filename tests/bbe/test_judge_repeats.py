"""`judge --repeats K` (issue 16): re-asks of identical inputs, each a recorded call the cache does not
answer, whose spread `bbe` reports beside the sensitivity without asking anything again."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from judgebench import api
from judgebench.data.dataset import sample_variants_path
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=sample_variants_path(), limit=10))
    return run


def test_a_deterministic_judge_has_no_jitter_and_bbe_asks_nothing_again(tmp_path: Path) -> None:
    run = _run(tmp_path)
    result = api.judge(run, api.JudgeRequest(models=["sim:unbiased"], limit=10, repeats=2))
    assert result.repeats == 2 * 20  # 10 items x 2 orders, twice
    repeats = [r for r in _lines(run / "bbe_neighbours.jsonl") if str(r["condition"]).startswith("repeat-")]
    assert len(repeats) == 40 and {r["condition"] for r in repeats} == {"repeat-1", "repeat-2"}
    assert not any(r["from_cache"] for r in repeats)  # the cache never answers a re-ask
    outcome = api.bbe(
        api.BBERequest(params=api.BBEParams(tau=0.5, delta=0.01, alpha=None), run=run, plot=False)
    )
    assert len(_lines(run / "bbe_neighbours.jsonl")) == 40  # bbe reused them: nothing asked again
    (cal,) = outcome.result.calibrations
    assert cal.jitter_measured == 0.0 and outcome.result.source["repeats"] == 2


def test_a_judge_that_answers_at_random_shows_its_jitter(tmp_path: Path) -> None:
    run = _run(tmp_path)
    flips = itertools.count()

    def coin(request: SeenRequest) -> Reply:  # a new answer on every request, identical input or not
        winner = "A" if next(flips) % 3 else "B"
        return Reply(body=chat_body(json.dumps({"winner": winner}), model=request.body["model"]))

    with OpenAIServer(coin) as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=30, max_retries=2)
        )
        judge = "openai-compatible:jittery"
        api.judge(
            run, api.JudgeRequest(models=[judge], limit=10, repeats=2, conditions="en"), options=options
        )
        served = len(server.chat_requests())
    assert served == 20 + 40  # the en plan, then every re-ask sent to the server
    outcome = api.bbe(
        api.BBERequest(params=api.BBEParams(tau=0.5, delta=0.01, alpha=None), run=run, plot=False)
    )
    (cal,) = outcome.result.calibrations
    assert cal.jitter_measured is not None and cal.jitter_measured > 0.1
