"""`report` and `bbe` at the sizes users run, as whole processes, against a bare `json.loads` pass.

Synthesises run folders of the INTERFACE shape (each judgments.jsonl line about 800 bytes, as the sim
judge writes them): a real translate (ready-made variants) and judge stage on a few items make the
manifest, then judgments.jsonl, plan.jsonl, variants.jsonl and audit.jsonl are written at full size from
those real lines. Sizes (4 judges; en/zh/ls, 2 orders, 2 zh tie-probes per item = 8 calls an item):

    13k   419 items    (LLMBar)             134k  4,190 items
    1m    31,250 items                      23lang 5,208 items x 23 languages (48 calls an item)

For each size, in one process: the bare pass (`json.loads` of every line, in a child process, timed
the same way), `judgebench report --run R` (cold, then again with the columnar cache warm), and
`judgebench bbe --run R --tau 0.5 --delta 0.01 --alpha auto`; prints wall, CPU, peak RSS, bytes of
RSS per judgment, each command's ratio to the bare pass, report.html's size, and (when chromium is
installed) how long headless Chromium takes to load and lay out the page. The last line gives the
growth exponent of wall time over the sizes run. With `--repeat N` every command runs once a round
for N rounds (the cold report after removing the columnar caches): the medians, the peak RSS over
the rounds, and the range of each round's own ratio to its bare pass. Usage:

    python scripts/bench_scale.py [--sizes 13k,134k,1m] [--repeat 3] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SUBSETS = ["Chat/alpacaeval-easy", "Chat/mt-bench", "ChatHard/llmbar", "Safety/refusals", "Reasoning/math"]
JUDGES = ["sim:default", "sim:biased", "sim:unbiased", "sim:bench-biased"]
LANGS_23 = ["zh", "ls", "ar", "cs", "de", "el", "es", "fa", "fr", "he", "hi", "id", "it", "ja", "ko", "nl"]
LANGS_23 += ["pl", "pt", "ro", "ru", "tr", "uk", "vi"]
SIZES: dict[str, tuple[int, list[str]]] = {
    "13k": (419, ["zh", "ls"]),
    "134k": (4190, ["zh", "ls"]),
    "1m": (31250, ["zh", "ls"]),
    "23lang": (5208, LANGS_23[:23]),
}


def _cli(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "judgebench", *args], cwd=cwd, check=True, capture_output=True)


def _text(rng: random.Random, words: int) -> str:
    vocab = ["the", "answer", "model", "is", "correct", "because", "first", "then", "we", "compute"]
    return " ".join(rng.choice(vocab) for _ in range(words))


def make_run(root: Path, items: int, conditions: list[str], seed: int = 0) -> Path:
    """A run folder with `items` items in en and `conditions`, four judges, every call answered."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    ids = [(f"{SUBSETS[i % len(SUBSETS)]}/{i}", SUBSETS[i % len(SUBSETS)], 1 + i % 2) for i in range(items)]
    with open(root / "items.jsonl", "w", encoding="utf-8") as fh:
        for item_id, subset, label in ids:
            row = {"id": item_id, "subset": subset, "instruction": _text(rng, 30), "label": label}
            row |= {"output_1": _text(rng, 60), "output_2": _text(rng, 60)}
            fh.write(json.dumps(row) + "\n")
    few = root / "few_variants.jsonl"
    with open(few, "w", encoding="utf-8") as fh:
        for item_id, _, _ in ids[:2]:
            for cond in conditions:
                row = {"item_id": item_id, "condition": cond, "instruction": "问 " + item_id}
                fh.write(json.dumps(row | {"output_1": "甲", "output_2": "乙"}, ensure_ascii=False) + "\n")
    run = root / "run"
    shutil.rmtree(run, ignore_errors=True)  # a kept run of an earlier benchmark: built afresh
    _cli(
        "translate",
        "--run",
        str(run),
        "--dataset",
        str(root / "items.jsonl"),
        "--variants",
        str(few),
        "--conditions",
        ",".join(conditions),
        "--limit",
        "2",
        cwd=root,
    )
    args = [x for judge in JUDGES for x in ("--model", judge)]
    _cli("judge", "--run", str(run), *args, "--limit", "2", "--no-cache", cwd=root)
    templates = _template_lines(run / "judgments.jsonl")
    _write_full(run, ids, conditions, templates, rng)
    return run


def _template_lines(path: Path) -> dict[str, dict[str, Any]]:
    """One real judgment per kind, as the sim judge wrote it (its shape and size), read a line at a
    time: this process must stay small (see `measure`)."""
    out: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            out.setdefault(rec["kind"], rec)
    return out


def _write_full(
    run: Path,
    ids: list[tuple[str, str, int]],
    conditions: list[str],
    templates: dict[str, dict[str, Any]],
    rng: random.Random,
) -> None:
    pair, probe = templates["pair"], templates["tie_probe"]
    with (
        open(run / "judgments.jsonl", "w", encoding="utf-8") as out,
        open(run / "plan.jsonl", "w", encoding="utf-8") as plan,
    ):
        for j, judge in enumerate(JUDGES):
            skill = 0.85 - 0.05 * j
            for item_id, subset, label in ids:
                for cond in ["en", *conditions]:
                    for order in ("orig", "swap"):
                        u = rng.random()
                        verdict = str(label) if u < skill else ("tie" if u < skill + 0.05 else str(3 - label))
                        if u > 0.995:
                            verdict = "invalid"
                        winner = {"tie": "Tie", "invalid": "invalid"}.get(verdict)
                        if winner is None:
                            winner = "A" if (verdict == "1") == (order == "orig") else "B"
                        rec = pair | {"judge": judge, "item_id": item_id, "subset": subset, "condition": cond}
                        rec |= {"order": order, "verdict": verdict, "winner": winner, "label": label}
                        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
                        plan.write(_key(rec))
                for order in ("en_zh", "zh_en"):
                    verdict = rng.choice(["tie", "tie", "en", "zh"])
                    rec = probe | {"judge": judge, "item_id": item_id, "subset": subset, "condition": "zh"}
                    rec |= {"order": order, "verdict": verdict, "label": label}
                    rec["winner"] = (
                        "Tie"
                        if verdict == "tie"
                        else ("A" if (verdict == "en") == (order == "en_zh") else "B")
                    )
                    out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
                    plan.write(_key(rec))
    with open(run / "variants.jsonl", "w", encoding="utf-8") as fh:
        for item_id, _, _ in ids:
            for cond in conditions:
                row = {"item_id": item_id, "condition": cond, "instruction": "问题 " + _text(rng, 25)}
                row |= {"output_1": "甲 " + _text(rng, 50), "output_2": "乙 " + _text(rng, 50)}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(run / "audit.jsonl", "w", encoding="utf-8") as fh:
        for item_id, _, _ in ids[:: max(1, len(ids) // 20)]:
            flag = {"item_id": item_id, "condition": conditions[0], "field": "output_1"}
            fh.write(json.dumps(flag | {"rule": "length_ratio", "detail": "synthetic"}) + "\n")


def _key(rec: dict[str, Any]) -> str:
    return json.dumps({k: rec[k] for k in ("judge", "item_id", "kind", "condition", "order")}) + "\n"


BARE = (
    "import json,sys\n"
    "n=0\n"
    "with open(sys.argv[1],'rb') as fh:\n"
    "    for line in fh:\n"
    "        json.loads(line); n+=1\n"
    "print(n)\n"
)


def measure(argv: list[str], cwd: Path) -> dict[str, float]:
    """Wall, CPU (user + system) and peak RSS of one child process (and the children it waited for).

    Linux counts in a child's peak RSS the peak of the process that spawned it (the memory it had
    when the child was forked and exec'd): this process must stay small, or every figure is at least
    its size. It refuses to measure once its own peak passes 200 MB."""
    own_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if own_peak_mb > 200:
        raise SystemExit(
            f"the benchmark itself peaked at {own_peak_mb:.0f} MB: its children's RSS would be off"
        )
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {err[-2000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def chromium_load(page: Path) -> float | None:
    exe = shutil.which("chromium")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as profile:
        argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"]
        argv += ["--virtual-time-budget=1000", "--dump-dom", page.as_uri()]
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, timeout=600)
        return time.perf_counter() - start


def _cold(run: Path) -> None:
    """Remove the derived columnar caches beside the logs, so that the next report reads them cold.
    The name is judgment_table.cache_path's, written out rather than imported: importing judgebench
    would load pyarrow into this process, and its memory would count in every child's peak RSS
    (tests/test_bench_scale.py checks the two agree)."""
    for log in ("judgments.jsonl", "plan.jsonl"):
        (run / f"{log}.table.parquet").unlink(missing_ok=True)


def _summary(rounds: list[dict[str, float]], bare: list[dict[str, float]]) -> dict[str, Any]:
    """A command over the rounds: its median wall and CPU, its peak RSS, and its ratio to the bare
    pass (the medians' ratio, and the range of each round's own ratio: a round's two processes ran
    minutes apart at most, so a machine that drifts over the benchmark moves both)."""
    walls = [r["wall_s"] for r in rounds]
    ratios = [r["wall_s"] / b["wall_s"] for r, b in zip(rounds, bare, strict=True)]
    return {
        "wall_s": statistics.median(walls),
        "cpu_s": statistics.median(r["cpu_s"] for r in rounds),
        "rss_mb": max(r["rss_mb"] for r in rounds),
        "ratio": statistics.median(walls) / statistics.median(b["wall_s"] for b in bare),
        "walls_s": walls,
        "round_ratios": ratios,
    }


def bench_size(name: str, root: Path, repeat: int = 1) -> dict[str, Any]:
    items, conditions = SIZES[name]
    run = make_run(root / name, items, conditions)
    # the run was written a moment ago: let the kernel write it out first, so that neither the bare
    # pass nor the cold report shares the machine with the flush of the ~900 MB just synthesised
    # (a user's judgments.jsonl was written over the hours of its calls)
    os.sync()
    with open(run / "judgments.jsonl", "rb") as fh:
        judgments = sum(1 for _ in fh)
    size = (run / "judgments.jsonl").stat().st_size
    py = sys.executable
    report_argv = [py, "-m", "judgebench", "report", "--run", str(run)]
    bbe_argv = [py, "-m", "judgebench", "bbe", "--run", str(run), "--tau", "0.5", "--delta", "0.01"]
    bbe_argv += ["--alpha", "auto"]
    # in rounds, each command once a round: a noisy shared machine moves every command of a round
    taken: dict[str, list[dict[str, float]]] = {"bare": [], "report": [], "report_again": [], "bbe": []}
    for _ in range(repeat):
        taken["bare"].append(measure([py, "-c", BARE, str(run / "judgments.jsonl")], cwd=root))
        _cold(run)
        taken["report"].append(measure(report_argv, cwd=root))
        # again, as a user re-running the report with other settings: the columnar cache is warm
        taken["report_again"].append(measure(report_argv, cwd=root))
        taken["bbe"].append(measure(bbe_argv, cwd=root))
    bare = taken["bare"]
    report = _summary(taken["report"], bare)
    html = run / "report.html"
    return {
        "size": name,
        "judgments": judgments,
        "bytes_per_line": round(size / judgments),
        "rounds": repeat,
        "bare": _summary(bare, bare),
        "report": report,
        "report_again": _summary(taken["report_again"], bare),
        "bbe": _summary(taken["bbe"], bare),
        "report_rss_bytes_per_judgment": report["rss_mb"] * 2**20 / judgments,
        "html_mb": html.stat().st_size / 2**20 if html.exists() else None,
        "chromium_s": chromium_load(html) if html.exists() else None,
    }


def _growth(rows: list[dict[str, Any]], what: str) -> float | None:
    pts = [(math.log(r["judgments"]), math.log(r[what]["wall_s"])) for r in rows]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="13k,134k,1m", help=f"comma-separated from {', '.join(SIZES)}")
    ap.add_argument("--keep", type=Path, help="build the runs here and keep them")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds of every command (medians, with each round's ratio)"
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    names = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [n for n in names if n not in SIZES]
    if unknown:
        ap.error(f"unknown size(s) {', '.join(unknown)}; known: {', '.join(SIZES)}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="jb-scale-"))
    rows = []
    try:
        for name in names:
            row = bench_size(name, root, args.repeat)
            rows.append(row)
            if not args.json:
                _print_row(row)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()
    summary: dict[str, Any] = {
        "rows": rows,
        "growth_report": _growth(rows, "report"),
        "growth_bbe": _growth(rows, "bbe"),
        "load_average": load,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"growth exponent (wall ~ n^k): report {_fmt(summary['growth_report'])}, "
            f"bbe {_fmt(summary['growth_bbe'])}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _print_row(r: dict[str, Any]) -> None:
    rounds = f", median of {r['rounds']} rounds" if r["rounds"] > 1 else ""
    print(f"{r['size']}: {r['judgments']:,} judgments ({r['bytes_per_line']} B a line{rounds})")
    b = r["bare"]
    print(
        f"  json.loads pass  {b['wall_s']:7.2f} s wall {b['cpu_s']:7.2f} s CPU {b['rss_mb']:7.0f} MB"
        + _spread(b)
    )
    for what in ("report", "report_again", "bbe"):
        m = r[what]
        ratios = m["round_ratios"]
        each = f" (rounds {min(ratios):.2f}-{max(ratios):.2f}x)" if len(ratios) > 1 else ""
        print(
            f"  {what:<16} {m['wall_s']:7.2f} s wall {m['cpu_s']:7.2f} s CPU {m['rss_mb']:7.0f} MB"
            f"  {m['ratio']:.2f}x the bare pass{each}{_spread(m)}"
        )
    print(
        f"  report RSS per judgment {r['report_rss_bytes_per_judgment']:.0f} B; report.html "
        f"{_fmt(r['html_mb'])} MB; chromium loads it in {_fmt(r['chromium_s'])} s"
    )


def _spread(m: dict[str, Any]) -> str:
    walls = m["walls_s"]
    return f"; walls {min(walls):.2f}-{max(walls):.2f} s" if len(walls) > 1 else ""


if __name__ == "__main__":
    main()
