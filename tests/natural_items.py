"""A JSONL file of `n` plain Natural items (alternating labels), for tests that only need items."""

from __future__ import annotations

import json
from pathlib import Path


def natural_items(path: Path, n: int) -> Path:
    rows = [
        {
            "id": f"Natural/{i}",
            "subset": "Natural",
            "instruction": f"Instruction {i}",
            "output_1": f"first {i}",
            "output_2": f"second {i}",
            "label": 1 + i % 2,
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
