"""Cost of the guards on outside text (issue 41): the formatting probe's Markdown patterns on hostile
64 KB lines, and the strict JSON reader (repeated keys, nesting) against `json.loads` on a dataset.

Prints, for each hostile input, the CPU seconds `strip_markdown` takes (median of --repeat runs), and for
a synthetic dataset of --lines JSONL lines shaped like LLMBar's (five string fields and a label), the
CPU seconds to decode every line with `json.loads` and with `judgebench.outside.loads`, and their ratio;
the load average before and after (quote it with the figures). Usage:

    python scripts/bench_outside_text.py [--repeat 5] [--lines 20000] [--json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judgebench.outside import loads
from judgebench.probes.markdown_patterns import strip_markdown

KIB64 = 1 << 16
HOSTILE = {
    "unclosed links [a](": "[a](" * (KIB64 // 4),
    "unclosed images ![a](": "![a](" * (KIB64 // 5),
    "bold never closed a **b": "a **b" * (KIB64 // 5),
    "strike never closed a ~~b": "a ~~b" * (KIB64 // 5),
    "a line of spaces": " " * KIB64 + "x",
    "opening brackets [": "[" * KIB64,
}


def _cpu(run: Callable[[], object]) -> float:
    """CPU seconds of one run (the machine is shared: CPU time is steadier than wall under load)."""
    start = time.process_time()
    run()
    return time.process_time() - start


def _median(run: Callable[[], object], repeat: int) -> float:
    return statistics.median(_cpu(run) for _ in range(repeat))


def _dataset(lines: int) -> list[str]:
    words = "a careful answer that explains each of the three steps with an example and a short summary "
    return [
        json.dumps(
            {
                "id": f"q{i:06d}",
                "subset": "Natural",
                "instruction": f"Task {i}: " + words * 2,
                "output_1": words * 6,
                "output_2": words * 5,
                "label": 1 + i % 2,
            }
        )
        for i in range(lines)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    markdown = {
        name: _median(functools.partial(strip_markdown, text), args.repeat) for name, text in HOSTILE.items()
    }
    rows = _dataset(args.lines)
    rounds = [
        (_cpu(lambda: [json.loads(r) for r in rows]), _cpu(lambda: [loads(r) for r in rows]))
        for _ in range(args.repeat)
    ]  # alternated, so a burst of load hits both alike
    plain = statistics.median(r[0] for r in rounds)
    strict = statistics.median(r[1] for r in rounds)
    out = {
        "markdown_64k_s": markdown,
        "dataset_lines": args.lines,
        "json_loads_s": plain,
        "outside_loads_s": strict,
        "ratio": strict / plain,
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for name, seconds in markdown.items():
        print(f"strip_markdown, 64 KB of {name}: {seconds:.4f} s")
    print(
        f"{args.lines:,} dataset lines: json.loads {plain:.3f} s, outside.loads {strict:.3f} s "
        f"(x{strict / plain:.2f})"
    )
    print(f"load average before {load_before}, after {out['load_after']}")


if __name__ == "__main__":
    main()
