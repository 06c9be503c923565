"""`judge` resumed on a run whose every call is answered, as whole processes, against a bare `json.loads`
pass over the same judgments.jsonl (issue 26: reruns, resumes and `--until-settled` at a million).

Times, each in its own child process (wall, CPU = user + system, peak RSS):

    bare pass           json.loads of every line of judgments.jsonl
    judge               `judgebench judge --run R --model J ...` with every planned call answered
    judge --dry-run     the same priced (the run's own reply tokens: costing.output_tokens.run_figures)
    judge --until-settled   rounds over the answered items until every judge settles

The run folder is one `scripts/bench_scale.py` synthesises (`--sizes 1m --keep DIR` builds DIR/1m/run);
its judges are the ones its manifest records. The run is written to (manifest, locks), so give a copy
of a folder you need unchanged. Usage:

    python scripts/bench_resume.py --run DIR [--skip until-settled] [--json]
    python scripts/bench_resume.py --build DIR [--size 1m]   # synthesise DIR/SIZE/run first
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import BARE, SIZES, make_run, measure

STEPS = ("judge", "dry-run", "until-settled")


def _judges(run: Path) -> list[str]:
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    judges = list((manifest.get("stages", {}).get("judge") or {}).get("judges", {}))
    if not judges:
        raise SystemExit(f"{run}: the manifest records no judge stage; build the run with --build")
    return judges


def bench(run: Path, skip: set[str]) -> dict[str, Any]:
    path = run / "judgments.jsonl"
    with open(path, "rb") as fh:
        lines = sum(1 for _ in fh)
    py = sys.executable
    base = [py, "-m", "judgebench", "judge", "--run", str(run)]
    base += [x for judge in _judges(run) for x in ("--model", judge)]
    rows: dict[str, Any] = {"judgments": lines, "bytes": path.stat().st_size}
    rows["bare"] = measure([py, "-c", BARE, str(path)], cwd=run)
    commands = {"judge": base, "dry-run": [*base, "--dry-run"], "until-settled": [*base, "--until-settled"]}
    for step in STEPS:
        if step in skip:
            continue
        got = measure(commands[step], cwd=run)
        rows[step] = got | {"ratio": got["wall_s"] / rows["bare"]["wall_s"]}
    rows["load_average"] = os.getloadavg()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", type=Path, help="a finished run folder (written to: give a copy)")
    where.add_argument("--build", type=Path, help="synthesise a run of --size here first")
    ap.add_argument("--size", default="1m", choices=sorted(SIZES))
    ap.add_argument("--skip", default="", help=f"comma-separated steps to leave out, of {', '.join(STEPS)}")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(STEPS):
        ap.error(f"unknown step(s) {', '.join(sorted(skip - set(STEPS)))}; known: {', '.join(STEPS)}")
    if args.build is not None:
        items, conditions = SIZES[args.size]
        run = make_run(args.build / args.size, items, conditions)
    else:
        run = args.run
    rows = bench(run, skip)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{run}: {rows['judgments']:,} judgments ({rows['bytes'] / rows['judgments']:.0f} B a line)")
    for step in ("bare", *STEPS):
        if step not in rows:
            continue
        m = rows[step]
        ratio = f"  {m['ratio']:.2f}x the bare pass" if "ratio" in m else ""
        print(f"  {step:<14} {m['wall_s']:7.2f} s wall {m['cpu_s']:7.2f} s CPU {m['rss_mb']:7.0f} MB{ratio}")
    load = rows["load_average"]
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
