"""Time `judgebench bbe` with `--verify 2000` on a full-size Judge-LS run, as a ratio to `judgebench
report` on the same run (the issue's target: bbe under 5 s on 2 cores).

The run is `bench_report.py`'s synthetic one (13,408 judgments = 4 judges x 419 items x (3 conditions x
2 orders + 2 tie-probes)); both commands run as subprocesses, so import time counts for both. Usage:

    python scripts/bench_bbe.py [--repeat 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_report import synthetic_judgments  # the same builder

BBE_ARGS = ["--tau", "0.5", "--delta", "0.01", "--alpha", "auto", "--verify", "2000"]


def build_run(folder: Path) -> Path:
    judgments, _flagged = synthetic_judgments()
    folder.mkdir(parents=True, exist_ok=True)
    lines = [j.model_dump_json(exclude_none=False) for j in judgments]
    (folder / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    print(f"{len(judgments)} judgments -> {folder}")
    return folder


def _time(cmd: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t0
        if done.returncode not in (0, 3):
            raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
        best = min(best, elapsed)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="the run folder to build (default: a temp one)")
    args = ap.parse_args()
    run = build_run(args.out or Path(tempfile.mkdtemp(prefix="bench_bbe_")))
    exe = [sys.executable, "-m", "judgebench"]
    report_s = _time([*exe, "report", "--run", str(run)], args.repeat)
    bbe_s = _time([*exe, "bbe", "--run", str(run), *BBE_ARGS], args.repeat)
    doc = json.loads((run / "bbe.json").read_text())
    units = sum(c["units"] for c in doc["calibrations"])
    print(
        f"report: {report_s:.2f} s; bbe {' '.join(BBE_ARGS)}: {bbe_s:.2f} s ({len(doc['calibrations'])} "
        f"judges, {units} units); ratio bbe/report {bbe_s / report_s:.2f}; target bbe < 5 s: "
        f"{'met' if bbe_s < 5 else 'MISSED'} (best of {args.repeat}; cores {os.cpu_count()}, load "
        f"{os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
