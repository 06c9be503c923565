"""Synthetic Judge-LS runs for the bbe tests: judgments.jsonl written directly, with planted flips."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import numpy as np

AUDIT_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "audit_bbe.py"


def audit_script() -> ModuleType:
    """scripts/audit_bbe.py as a module: its populations and simulations, run small in the tests."""
    spec = importlib.util.spec_from_file_location("audit_bbe", AUDIT_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_run(
    run: Path,
    *,
    judges: dict[str, float],
    items: int = 40,
    conditions: tuple[str, ...] = ("en", "zh", "ls"),
    accuracy: float = 0.8,
    invalid_rate: float = 0.0,
    missing_rate: float = 0.0,
    probs: bool = False,
    seed: int = 0,
) -> Path:
    """A run folder whose judges flip their en verdict in other conditions with the given rate."""
    rng = np.random.default_rng(seed)
    run.mkdir(parents=True, exist_ok=True)
    (run / "manifest.json").write_text(json.dumps({"dataset": None, "stages": {}, "history": []}))
    lines: list[str] = []
    for judge, flip in judges.items():
        for i in range(items):
            item_id = f"Natural/{i}"
            label = 1 if i % 2 == 0 else 2
            for order in ("orig", "swap"):
                correct = rng.random() < accuracy
                en = str(label) if correct else str(3 - label)
                for cond in conditions:
                    verdict: str | None = en
                    if cond != "en" and rng.random() < flip:
                        verdict = str(3 - int(en)) if rng.random() < 0.7 else "tie"
                    if cond != "en" and rng.random() < invalid_rate:
                        verdict = "invalid"
                    if cond != "en" and rng.random() < missing_rate:
                        verdict = None
                    rec: dict[str, object] = {
                        "judge": judge,
                        "item_id": item_id,
                        "subset": "Natural",
                        "kind": "pair",
                        "condition": cond,
                        "order": order,
                        "verdict": verdict,
                        "winner": None if verdict is None else "A",
                        "label": label,
                        "raw": None if verdict is None else "{}",
                        "error": "timeout" if verdict is None else None,
                    }
                    if probs and verdict in ("1", "2", "tie"):
                        p1 = {"1": 0.8, "2": 0.15, "tie": 0.3}[verdict]
                        pa, pb = (p1, 0.95 - p1) if order == "orig" else (0.95 - p1, p1)
                        rec.update(prob_a=pa, prob_b=pb, prob_tie=0.05)
                    lines.append(json.dumps(rec))
            # a tie-probe line, which bbe must ignore
            lines.append(
                json.dumps(
                    {
                        "judge": judge,
                        "item_id": item_id,
                        "subset": "Natural",
                        "kind": "tie_probe",
                        "condition": "zh",
                        "order": "en_zh",
                        "verdict": "tie",
                        "label": label,
                    }
                )
            )
    (run / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    return run
