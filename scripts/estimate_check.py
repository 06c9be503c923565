"""The time estimate against the measured time of a small run, uncached and then fully cached.

For each model (the embedded `local` and a `sim:` judge), in a fresh HOME (an empty response cache):
`judgebench run --limit N` into one run folder, then the same design into a second folder (every call
now in the response cache). For each it prints the line the judge stage announced before its first
call (calls to pay for and the expected time), the run's whole estimate (its --dry-run: judge, bbe,
report), the measured wall time, their ratio and the load average (`uptime`) before and after: the
machine is shared, and the embedded model's pace is in its load.

    python scripts/estimate_check.py [--limit 2] [--model local --model sim:selftest-unbiased]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judgebench.models.local import MODELS_DIR_ENV, models_dir

REPO = Path(__file__).resolve().parents[1]


def seconds_of(text: str) -> float:
    """`about 2m46s`, `about 1h05m`, `about 40s`, `under a second` as seconds."""
    if "under a second" in text:
        return 0.0
    h = re.search(r"(\d+)h(\d+)m", text)
    if h:
        return int(h[1]) * 3600 + int(h[2]) * 60
    m = re.search(r"(\d+)m(\d+)s", text)
    if m:
        return int(m[1]) * 60 + int(m[2])
    s = re.search(r"(\d+)s", text)
    return float(s[1]) if s else float("nan")


def load() -> str:
    return (
        subprocess.run(["uptime"], capture_output=True, text=True).stdout.split("load average:")[-1].strip()
    )


def jb(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "judgebench", *args],
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return done, time.perf_counter() - start


def check(model: str, limit: int, env: dict[str, str], runs: Path) -> None:
    design = ["--model", model, "--limit", str(limit)]
    name = model.replace(":", "_")
    for attempt in ("uncached", "cached"):
        run = runs / f"{name}-{attempt}"
        dry, _ = jb(env, "run", "--run", str(run), *design, "--dry-run")
        whole = re.search(r"expected time: (about \S+|under a second)", dry.stdout + dry.stderr)
        before = load()
        done, took = jb(env, "run", "--run", str(run), *design, "--yes")
        after = load()
        said = [ln for ln in done.stderr.splitlines() if re.match(r"judge .*: [\d,]+ calls, expected ", ln)]
        announced = said[0].split(" (")[0] if said else "(no announcement)"
        judge_s = seconds_of(said[0].split(", expected ")[1]) if said else float("nan")
        dry_s = seconds_of(whole[1]) if whole else float("nan")
        print(
            f"{model} {attempt}: exit {done.returncode}; dry run: {whole[1] if whole else '?'} (a fresh "
            f"folder: every call counted); before judging: '{announced}'; measured {took:.0f} s "
            f"(ratio measured/announced {took / max(judge_s, 1):.2f}, measured/dry run "
            f"{took / max(dry_s, 1):.2f}); load {before} -> {after}",
            flush=True,
        )
        if done.returncode != 0:
            print(done.stderr[-2000:])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=2, help="items (each: en/zh/ls x 2 orders + tie-probes)")
    parser.add_argument("--model", action="append", help="models (default: local, sim:selftest-unbiased)")
    args = parser.parse_args()
    models = args.model or ["local", "sim:selftest-unbiased"]
    with tempfile.TemporaryDirectory(prefix="jb-estimate-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "JUDGEBENCH_CACHE_DIR": str(home / "cache")}
        env[MODELS_DIR_ENV] = str(models_dir())  # the weights already assembled here; responses not
        env["PYTHONPATH"] = str(REPO / "src")
        print(f"{os.cpu_count()} cores; load {load()}; limit {args.limit}; empty response cache in {home}")
        for model in models:
            check(model, args.limit, env, Path(tmp) / "runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
