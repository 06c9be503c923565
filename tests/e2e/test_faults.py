"""A judge run through 429s, 500s, timeouts and malformed 200s ends exactly where a clean run does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench import api
from judgebench.records import Judgment
from judgebench.store.run_folder import last_per_key, read_jsonl
from tests.e2e.helpers import (
    DeterministicJudge,
    FaultPlan,
    metrics_by_key,
    same_metrics,
    write_items,
    write_variants,
)
from tests.servers.openai_server import OpenAIServer

JUDGE = "openai-compatible:e2e-judge"


def _judge_and_report(
    run: Path, items: Path, variants: Path, responder: DeterministicJudge, timeout: float
) -> tuple[api.JudgeResult, int]:
    api.translate(run, api.TranslateRequest(dataset=str(items), variants_file=variants))
    server = OpenAIServer(responder)
    with server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(
                base_url=server.base_url,
                timeout=timeout,
                max_retries=8,
                backoff_initial=0.01,
                backoff_max=0.05,
            ),
            progress=False,
        )
        result = api.judge(run, api.JudgeRequest(models=[JUDGE]), options=options)
        requests = len(server.chat_requests())
    api.report(run)
    return result, requests


def _verdicts(run: Path) -> dict[tuple[str, ...], tuple[str | None, str | None]]:
    records = last_per_key(read_jsonl(run / "judgments.jsonl", Judgment), key=lambda j: j.call_key())
    return {k: (j.winner, j.verdict) for k, j in records.items()}


@pytest.mark.slow
def test_faulty_server_gives_every_judgment_and_the_clean_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = write_items(tmp_path / "items.jsonl", 40)
    variants = write_variants(items, tmp_path / "variants.jsonl")

    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache-clean"))
    clean_result, clean_requests = _judge_and_report(
        tmp_path / "clean", items, variants, DeterministicJudge(), timeout=30.0
    )
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path / "cache-faulty"))
    faulty = DeterministicJudge(faults=FaultPlan(), seed=20261129)
    faulty_result, faulty_requests = _judge_and_report(
        tmp_path / "faulty", items, variants, faulty, timeout=1.0
    )

    planned = 40 * 8  # en, zh, ls x 2 orders + 2 zh tie-probes
    assert clean_result.planned == faulty_result.planned == planned
    assert clean_requests == planned
    # every kind of fault really happened, each cost a retry, and the client classified each one
    faults = {k: v for k, v in faulty.outcomes.items() if k != "ok"}
    assert all(faulty.outcomes[k] >= 1 for k in ("429", "500", "timeout")), faulty.outcomes
    assert faulty.outcomes["truncated"] + faulty.outcomes["html"] >= 1, faulty.outcomes
    # (a reply slower than the 1 s timeout on a loaded machine is one more retry, never one fewer)
    assert faulty_requests >= planned + sum(faults.values())
    stats = json.loads((tmp_path / "faulty" / "manifest.json").read_text())["stages"]["judge"]["judges"]
    seen = stats[JUDGE]["stats"]["status_counts"]
    assert seen.get("429") == faults["429"] and seen.get("500") == faults["500"], (seen, faults)
    assert seen.get("malformed") == faulty.outcomes["truncated"] + faulty.outcomes["html"], (seen, faults)
    assert seen.get("timeout", 0) >= faults["timeout"], (seen, faults)
    print(f"server faults {dict(faults)}; client saw {seen}; requests {faulty_requests} for {planned} calls")
    outcome = faulty_result.outcomes[JUDGE]
    assert outcome.missing == 0 and outcome.failures == []
    assert outcome.verdicts + outcome.invalid == planned

    # the same verdict for every call, and the same numbers in metrics.json (values, n, intervals, p)
    clean_verdicts = _verdicts(tmp_path / "clean")
    assert len(clean_verdicts) == planned
    assert _verdicts(tmp_path / "faulty") == clean_verdicts
    clean_metrics = metrics_by_key(tmp_path / "clean")
    assert {k[1] for k in clean_metrics} >= {"strict_accuracy", "flip_rate", "mcnemar", "tie_probe_en"}
    assert same_metrics(metrics_by_key(tmp_path / "faulty"), clean_metrics) == []
