"""Start-up cost of the CLI and the library, each as a fresh process (issue 26: `judgebench --help` and
`judgebench report --help` <= 0.3 s wall on a quiet machine).

Times N fresh runs of each command, prints wall (median and min) and CPU (user + sys, median) per
command, its ratio to a bare `python -c pass` measured in the same rounds, and the load average
before and after (a busy machine stretches wall, so quote it with the figures). The commands are run
round-robin so that a burst of load hits all of them alike. Usage:

    python scripts/bench_startup.py [--runs 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
CLI = "import sys; from judgebench.cli import main; sys.argv = ['judgebench', *sys.argv[1:]]; main()"
COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "judgebench --help": ["-c", CLI, "--help"],
    "judgebench report --help": ["-c", CLI, "report", "--help"],
    "judgebench bbe --help": ["-c", CLI, "bbe", "--help"],
    "import judgebench.api": ["-c", "import judgebench.api"],
}
# the installed console script too, where it sits beside this interpreter (a virtual environment)
SCRIPT = Path(sys.executable).with_name("judgebench")


def _once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process running `args` (the interpreter's, unless the
    first is a path)."""
    command = args if args[0].startswith("/") else [sys.executable, *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(runs: int) -> dict[str, dict[str, float]]:
    commands = dict(COMMANDS)
    if SCRIPT.exists():
        commands["judgebench --help (script)"] = [str(SCRIPT), "--help"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    env["COLUMNS"] = "100"  # the help renders at one width whatever the terminal
    # as an installed package runs: from its .pyc files (the warm-up writes them), not recompiling
    # every module of the checkout each run (~10 ms of --help, ~0.15 s of the api, where it is set)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for args in commands.values():  # one warm-up each: the page cache, the .pyc files
        _once(args, env)
    for _ in range(runs):
        for name, args in commands.items():
            wall, cpu = _once(args, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    bare = statistics.median(walls["python -c pass"])
    return {
        name: {
            "wall_median_s": statistics.median(walls[name]),
            "wall_min_s": min(walls[name]),
            "cpu_median_s": statistics.median(cpus[name]),
            "x_bare_python": statistics.median(walls[name]) / bare,
        }
        for name in commands
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh runs of each command")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    load_before = os.getloadavg()
    figures = measure(args.runs)
    load_after = os.getloadavg()
    if args.json:
        print(json.dumps({"load_before": load_before, "load_after": load_after, "figures": figures}))
        return
    print(f"{os.cpu_count()} cores; load average before {load_before[0]:.2f} {load_before[1]:.2f}")
    print(f"{args.runs} fresh runs each, round-robin")
    print(f"{'command':<30}{'wall median':>12}{'wall min':>10}{'cpu median':>12}{'x python':>10}")
    for name, f in figures.items():
        print(
            f"{name:<30}{f['wall_median_s']:>11.3f}s{f['wall_min_s']:>9.3f}s"
            f"{f['cpu_median_s']:>11.3f}s{f['x_bare_python']:>10.1f}"
        )
    print(f"load average after {load_after[0]:.2f} {load_after[1]:.2f}")
    target = 0.3
    for name in ("judgebench --help", "judgebench report --help"):
        f = figures[name]
        verdict = "meets" if f["wall_median_s"] <= target else "misses"
        print(f"{name}: median {f['wall_median_s']:.3f}s {verdict} the {target} s target")


if __name__ == "__main__":
    main()
