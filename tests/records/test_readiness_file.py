"""readiness.json is built from and read through records/readiness_document.py; the JSON keeps INTERFACE.md's
shape, and a file written before the `intervals` and `why` keys existed still reads."""

from __future__ import annotations

import json
from pathlib import Path

from judgebench.records.manifest import SequentialStop
from judgebench.records.readiness_document import ReadinessEntry, ReadinessFile

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "run_main_2026_12" / "readiness.json"


def test_a_file_from_before_the_intervals_key_reads_and_round_trips() -> None:
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert "intervals" not in raw
    doc = ReadinessFile.read(FIXTURE)
    assert doc.intervals == {} and len(doc.verdicts) == len(raw["verdicts"])
    dumped = doc.model_dump(mode="json")
    assert "why" not in raw["verdicts"][0] and dumped["verdicts"][0]["why"] == {}  # added with its default
    dumped["verdicts"] = [
        {k: v[k] for k in old} for v, old in zip(dumped["verdicts"], raw["verdicts"], strict=True)
    ]
    assert {k: dumped[k] for k in raw} == raw  # every key it had, unchanged


def test_the_json_keeps_interfaces_verdict_shape() -> None:
    stop = SequentialStop(
        reason="settled", items=20, items_total=60, calls=160, calls_full=480, seed=0, round_items=20,
        confidence=0.95, verdicts={"zh": "fail"},
    )  # fmt: skip
    doc = ReadinessFile(
        complete=True,
        verdicts=[
            ReadinessEntry(judge="J", condition="zh", verdict="fail", baseline="pass", invariance="fail")
        ],
        stops={"J": stop},
        intervals={"J": "anytime-valid"},
    )
    out = json.loads(doc.model_dump_json())
    keys = {"judge", "condition", "verdict", "baseline", "invariance", "reasons", "why"}
    assert set(out["verdicts"][0]) == keys
    assert out["stops"]["J"]["reason"] == "settled" and out["intervals"] == {"J": "anytime-valid"}
    assert ReadinessFile.model_validate(out) == doc
    assert doc.gate(strict=False) == "fail"
