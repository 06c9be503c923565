"""A scripted newcomer session (issues 20 and 32): the README's commands in a fresh clone, with no API
key and no terminal, one line per surprise of the issues saying whether it is fixed (points 1-9:
issue 20; 10-14: issue 32's points 1-5; 15-18: issue 46's items 1-4).

    python scripts/newcomer.py                 # sim judges: about a minute
    python scripts/newcomer.py --quickstart 3  # also the README's quick start on the embedded model,
                                               # limited to 3 items (the full one takes minutes)

It clones this repository's committed HEAD into a temporary folder and runs `python -m judgebench` from
that clone's sources (PYTHONPATH), with stdin, stdout and stderr redirected (no TTY), every provider
key removed from the environment, and LLMBar downloads pointed at a closed port (any download fails
loudly). LLMBar is `../shared/llmbar` beside the repository when present, else a toy copy. Exit 0 only
when every point holds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_COMPATIBLE_API_KEY",
    "OPENAI_BASE_URL",
)
SIM, BIASED = "sim:selftest-unbiased", "sim:selftest-always-a"
NOWHERE = "http://127.0.0.1:9"  # a closed port: a download or call that happens fails at once


class Session:
    def __init__(self, clone: Path, scratch: Path) -> None:
        self.clone = clone
        self.env = {k: v for k, v in os.environ.items() if k not in KEYS}
        self.env.update(
            PYTHONPATH=str(clone / "src"),
            JUDGEBENCH_LLMBAR_URL=NOWHERE,
            HF_HUB_OFFLINE="1",
            TMPDIR=str(scratch),
            COLUMNS="160",
        )
        self.results: list[tuple[int, bool, str]] = []

    def jb(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "judgebench", *args],
            cwd=self.clone,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=900,
        )

    def point(self, number: int, ok: bool, line: str) -> None:
        self.results.append((number, ok, line))
        print(f"{number} {'ok  ' if ok else 'FAIL'} {line}", flush=True)


def toy_llmbar(root: Path) -> Path:
    subsets = [
        "Natural",
        "Adversarial/Neighbor",
        "Adversarial/GPTInst",
        "Adversarial/GPTOut",
        "Adversarial/Manual",
    ]
    for subset in subsets:
        folder = root / "Dataset" / "LLMBar" / subset
        folder.mkdir(parents=True)
        items = [
            {"input": f"{subset} q{i}", "output_1": f"a{i}", "output_2": f"b{i}", "label": 1 + i % 2}
            for i in range(4)
        ]
        (folder / "dataset.json").write_text(json.dumps(items))
        for name in ("GPT-4/Vanilla", "ChatGPT/Vanilla"):
            verdict = {"swap = False": {"completion": ["Output (a)"], "winner": "1"}}
            verdict["swap = True"] = {"completion": ["Output (b)"], "winner": "2"}
            out = folder / "evaluators" / name
            out.mkdir(parents=True)
            (out / "result.json").write_text(json.dumps([{**it, "results": [verdict]} for it in items]))
    return root


def judges_of(run: Path) -> set[str]:
    path = run / "judgments.jsonl"
    return {json.loads(line)["judge"] for line in path.read_text().splitlines()} if path.exists() else set()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quickstart", type=int, metavar="N", help="also time `judgebench run --limit N` (embedded model)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jb-newcomer-") as tmp:
        base = Path(tmp)
        clone, scratch = base / "judgebench", base / "scratch"
        scratch.mkdir()
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        shared = REPO.parent / "shared" / "llmbar"
        llmbar = shared if (shared / "Dataset").is_dir() else toy_llmbar(base / "llmbar")
        s = Session(clone, scratch)
        print(f"clone of {REPO} at {clone}; LLMBar: {llmbar}; no key, no TTY")
        run_points(s, llmbar, base)
        second_pass(s, llmbar)
        third_pass(s, llmbar)
        if args.quickstart:
            quickstart(s, args.quickstart)
        left = [p for p in scratch.iterdir()]
        if left:
            print(f"note: left in the temp dir: {[p.name for p in left]}")
    failed = [n for n, ok, _ in s.results if not ok]
    print(
        f"{len(s.results) - len(failed)}/{len(s.results)} points hold"
        + (f"; failed: {failed}" if failed else "")
    )
    return 1 if failed else 0


def run_points(s: Session, llmbar: Path, base: Path) -> None:
    runs = s.clone / "runs"
    # 1. the README's import, with two evaluators
    gpt4 = runs / "gpt4"
    r = s.jb("import", "llmbar-results", "--run", str(gpt4), "--data-dir", str(llmbar),
             "--evaluator", "GPT-4/Vanilla", "--evaluator", "ChatGPT/Vanilla")  # fmt: skip
    got = judges_of(gpt4)
    s.point(1, r.returncode == 0 and got == {"GPT-4/Vanilla", "ChatGPT/Vanilla"},
            f"import llmbar-results --evaluator x2: exit {r.returncode}, "
            f"judges imported: {sorted(got)}")  # fmt: skip

    # 2. run with a paid judge and no key
    paid = runs / "paid"
    r = s.jb("run", "--run", str(paid), "--model", "openai:gpt-4.1-mini")
    first = (r.stderr.strip().splitlines() or [""])[-1]
    asked = "Go on?" in r.stdout + r.stderr or "dry run" in r.stdout
    s.point(2, r.returncode == 1 and "OPENAI_API_KEY" in r.stderr and not asked and not paid.exists(),
            f"run --model openai:gpt-4.1-mini, no key: exit {r.returncode}, no estimate/question, "
            f"no folder ({not paid.exists()}): {first[:110]}")  # fmt: skip

    # 3. translate that did not finish, then the README's next step
    llm = runs / "llmbar"
    r = s.jb("translate", "--run", str(llm), "--dataset", "llmbar", "--data-dir", str(llmbar),
             "--translator", "openai:gpt-4.1-mini")  # fmt: skip
    no_key = r.returncode == 1 and not llm.exists()
    part = runs / "partial"
    s.jb("translate", "--run", str(part), "--dataset", "sample", "--limit", "2", "--translator",
         "openai-compatible:m", "--base-url", f"{NOWHERE}/v1", "--max-retries", "0")  # fmt: skip
    refused = s.jb("judge", "--run", str(part), "--model", SIM, "--dry-run")
    asked_en = s.jb("judge", "--run", str(part), "--model", SIM, "--dry-run", "--conditions", "en")
    unfinished = "did not finish" in refused.stderr
    s.point(3, no_key and refused.returncode == 1 and unfinished and asked_en.returncode == 0,
            f"translate without key: exit 1, no folder ({no_key}); judge after a failed translation: exit "
            f"{refused.returncode} ('did not finish' {unfinished}), with --conditions en: "
            f"exit {asked_en.returncode}")  # fmt: skip

    # 4. judge on the imported run: the data dir is recorded, a bad spec is the error
    manifest = json.loads((gpt4 / "manifest.json").read_text()) if gpt4.exists() else {}
    recorded = (manifest.get("dataset") or {}).get("data_dir")
    bad = s.jb("judge", "--run", str(gpt4), "--model", "opnai:gpt-4.1-mini", "--dry-run")
    good = s.jb("judge", "--run", str(gpt4), "--model", SIM, "--dry-run")
    spec_first = "unknown provider 'opnai'" in bad.stderr and "Name or service" not in bad.stderr
    s.point(4, bool(recorded) and spec_first
            and good.returncode == 0,
            f"imported run records data_dir={recorded}; bad spec: '{bad.stderr.strip()[:70]}'; "
            f"judge --dry-run offline: exit {good.returncode}")  # fmt: skip

    # 5. a run with output redirected: progress lines, then the verdicts and the report
    sim = runs / "sim"
    clock = time.perf_counter()
    r = s.jb("run", "--run", str(sim), "--model", SIM, "--model", BIASED, "--no-cache",
             env={"JUDGEBENCH_PROGRESS_SECONDS": "0.05"})  # fmt: skip
    took = time.perf_counter() - clock
    lines = [ln for ln in r.stderr.splitlines() if re.search(r"\d+/\d+ calls, .*/s, ETA ", ln)]
    rep = s.jb("report", "--run", str(sim), "--no-html", "--bootstrap", "0")
    # the sample's 30 items are too few for a pass (issue 40): the biased judge fails, the other is
    # inconclusive, each with its reason
    verdicts = "FAIL sim:selftest-always-a" in r.stdout and "INCONCLUSIVE sim:selftest-unbiased" in r.stdout
    s.point(5, r.returncode == 0 and bool(lines) and verdicts and "report: " in r.stdout
            and "A-BB: bias-bounded rankings" in rep.stdout,
            f"run (no TTY, {took:.0f}s): {len(lines)} progress line(s), last '{lines[-1] if lines else ''}'; "
            f"verdicts + report path printed; report shows A-BB: {'A-BB' in rep.stdout}")  # fmt: skip

    # 6. help text
    bad_help = []
    for cmd in (
        ["run"],
        ["translate"],
        ["judge"],
        ["report"],
        ["bbe"],
        ["selftest"],
        ["import", "llmbar-results"],
        ["data", "show"],
    ):
        out = s.jb(*cmd, "--help").stdout
        bad_help += [
            f"{' '.join(cmd)}: {t}"
            for t in ("<bool>", "<str>", "<int", "<float", "list[str]", "[x>=", "(default ")
            if t in out
        ]
    report_help, tr_help, run_help = (s.jb(c, "--help").stdout for c in ("report", "translate", "run"))
    extras = "[default: 1000]" in report_help and "--reask" in tr_help and "--subset" in run_help
    s.point(6, not bad_help and extras,
            f"--help of 8 commands: Python types/odd defaults found: {bad_help or 'none'}; report defaults, "
            f"translate --reask, run --subset: {extras}")  # fmt: skip

    # 7. mistakes: a bare model name, LLMBar's own subfolder
    r = s.jb("judge", "--run", str(sim), "--model", "gpt-4.1-mini", "--dry-run")
    d = s.jb("data", "show", "llmbar", "--data-dir", str(llmbar / "Dataset" / "LLMBar"))
    hinted = "did you mean openai:gpt-4.1-mini?" in r.stderr and "gpt41mini" in r.stderr
    s.point(7, hinted and "pass --data-dir" in d.stderr,
            f"--model gpt-4.1-mini: 'did you mean openai:gpt-4.1-mini?' + judges.toml names; --data-dir "
            f".../Dataset/LLMBar: {'pass --data-dir ' + str(llmbar) in d.stderr}")  # fmt: skip

    # 8. bbe asked for no shrinkage (--alpha 1, infeasible here) after run's feasible release (the
    # default --alpha auto releases, so the infeasible case is asked for by name)
    before = (sim / "bbe.json").read_text() if (sim / "bbe.json").exists() else ""
    r = s.jb("bbe", "--tau", "0.5", "--delta", "0.01", "--alpha", "1", "--run", str(sim))
    kept = bool(before) and (sim / "bbe.json").read_text() == before
    s.point(8, r.returncode == 3 and kept and (sim / "bbe.infeasible.json").exists(),
            f"bbe --alpha 1 (infeasible, exit {r.returncode}): bbe.json kept {kept}, "
            f"bbe.infeasible.json written {(sim / 'bbe.infeasible.json').exists()}")  # fmt: skip

    # 9. selftest's temp dir; report on the imported run
    before_tmp = set(Path(s.env["TMPDIR"]).iterdir())
    st = s.jb("selftest")
    left = set(Path(s.env["TMPDIR"]).iterdir()) - before_tmp
    rep = s.jb("report", "--run", str(gpt4), "--no-html")
    md = (gpt4 / "report.md").read_text() if (gpt4 / "report.md").exists() else ""
    row = next(
        (ln for ln in rep.stdout.splitlines() if ln.strip().startswith("GPT-4/Vanilla") and "—" in ln), ""
    )
    ok9 = (
        not left
        and "No item was flagged" not in md
        and "nothing in this run was translated" in md
        and row.count("—") >= 3
    )
    s.point(9, ok9 and st.returncode == 0,
            f"selftest exit {st.returncode}, left in temp: {len(left)}; imported report: no audit "
            f"sensitivity, tokens '—': {row.count('—') >= 3}")  # fmt: skip


def second_pass(s: Session, llmbar: Path) -> None:
    """Issue 32, points 1-5 (as points 10-14)."""
    runs = s.clone / "runs"
    api = "openai:gpt-4.1-mini"
    # 32.1 time: a dry run's time column and what it rests on; the line before the first call
    r = s.jb("run", "--run", str(runs / "t"), "--dry-run")
    said = "expected time: about" in r.stdout + r.stderr
    measured = re.search(r"measured \d{4}-\d{2}-\d{2}", r.stdout + r.stderr) is not None
    timed = s.jb("run", "--run", str(runs / "t1"), "--model", SIM, "--no-cache", "--limit", "5",
                 env={"JUDGEBENCH_PROGRESS_SECONDS": "0"})  # fmt: skip
    ahead = [ln for ln in timed.stderr.splitlines() if ", expected " in ln and " calls" in ln]
    pace = [ln for ln in timed.stderr.splitlines() if "left at that pace" in ln]
    s.point(
        10,
        said and measured and bool(ahead) and len(pace) == 1 and timed.returncode == 0,
        f"32.1 run --dry-run says the expected time ({said}, from a measurement: {measured}); "
        f"before judging: '{ahead[0][:70] if ahead else ''}...', then the pace once ({len(pace)})",
    )

    # 32.2 a modified LLMBar copy: one clean warning line per command
    toy = toy_llmbar(s.clone.parent / "toy-llmbar")
    outs = [
        s.jb("translate", "--run", str(runs / "w"), "--dataset", "llmbar", "--data-dir", str(toy),
             "--translator", api, "--dry-run"),
        s.jb("plan", "--dataset", "llmbar", "--data-dir", str(toy), "--model", SIM, "--sim-seeds", "1"),
    ]  # fmt: skip
    lines = [sum(ln.startswith("warning: ") for ln in o.stderr.splitlines()) for o in outs]
    python_format = any("Warning:" in o.stderr or ".py:" in o.stderr for o in outs)
    s.point(
        11,
        lines == [1, 1] and not python_format,
        f"32.2 modified LLMBar copy: warning lines per command {lines}, Python's format: {python_format}",
    )

    # 32.3 the README's dry runs in order: translate --dry-run, then judge --dry-run
    llm = runs / "llmbar"
    tr = s.jb("translate", "--run", str(llm), "--dataset", "llmbar", "--data-dir", str(llmbar),
              "--translator", api, "--dry-run")  # fmt: skip
    jd = s.jb("judge", "--run", str(llm), "--dataset", "llmbar", "--data-dir", str(llmbar), "--conditions",
              "en,zh,ls", "--model", api, "--model", "anthropic:claude-haiku-4-5", "--dry-run")  # fmt: skip
    bare = s.jb("judge", "--run", str(llm), "--model", api, "--dry-run")
    hint = "--conditions en,zh,ls" in bare.stderr
    s.point(
        12,
        tr.returncode == 0
        and jd.returncode == 0
        and "not translated yet" in jd.stderr
        and hint
        and not llm.exists(),
        f"32.3 translate --dry-run then judge --dry-run (README's flags): exit {tr.returncode}, "
        f"{jd.returncode}; without them the error says what to pass: {hint}; nothing written",
    )

    # 32.4 a FAIL verdict says why, per part, and where to read more
    r = s.jb("run", "--run", str(runs / "f"), "--model", BIASED, "--limit", "10")
    out = r.stdout.splitlines()
    fails = [i for i, ln in enumerate(out) if ln.startswith("FAIL ")]
    why = bool(fails) and all(out[i + 1].startswith(("  baseline: ", "  invariance: ")) for i in fails)
    s.point(13, r.returncode == 0 and why and "#verdict" in r.stdout,
            f"32.4 {len(fails)} FAIL line(s), each followed by its part's reason: {why}; "
            f"where to read more: {'#verdict' in r.stdout}")  # fmt: skip

    # 32.5 help at 80 columns
    narrow = {"COLUMNS": "80", "TERM": "dumb"}
    cut, missing_example = [], []
    for cmd in (["run"], ["translate"], ["judge"], ["report"], ["bbe"], ["plan"], ["selftest"],
                ["data", "show"], ["import", "llmbar-results"], ["cache", "info"]):  # fmt: skip
        text = s.jb(*cmd, "--help", env=narrow).stdout
        if "…" in text or max(len(ln) for ln in text.splitlines()) > 80:
            cut.append(" ".join(cmd))
        if "Example" not in text:
            missing_example.append(" ".join(cmd))
    bbe_help = " ".join(s.jb("bbe", "--help", env=narrow).stdout.split())
    choices = "holdout" in bbe_help and "exact_ucb" in bbe_help and " TEXT " not in bbe_help
    hub = "hub snapshots" in " ".join(s.jb("run", "--help", env=narrow).stdout.replace("│", " ").split())
    s.point(
        14,
        not cut and not missing_example and choices and hub,
        f"32.5 --help at 80 columns: cut {cut or 'none'}; "
        f"without an example {missing_example or 'none'}; "
        f"fixed-value options list their choices: {choices}; --data-dir names hub snapshots: {hub}",
    )


def third_pass(s: Session, llmbar: Path) -> None:
    """Issue 46, items 1-4 (as points 15-18)."""
    runs = s.clone / "runs"
    narrow = {"COLUMNS": "80", "TERM": "dumb"}
    # 46.1 tables at 80 columns: every number and name whole (no ellipsis)
    models = ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5", "sim:drift-stable"]
    dry = s.jb("run", "--run", str(runs / "n80"), *[a for m in models for a in ("--model", m)], "--dry-run",
               env=narrow)  # fmt: skip
    plan = s.jb("plan", "--dataset", "sample", "--model", models[0], "--model", models[1], env=narrow)
    texts = [dry.stdout + dry.stderr, plan.stdout + plan.stderr]
    cut = [name for name, text in zip(("run --dry-run", "plan"), texts, strict=True) if "…" in text]
    whole = all(m in texts[0] for m in models) and all(m in texts[1] for m in models[:2])
    s.point(15, dry.returncode == 0 and plan.returncode == 0 and not cut and whole,
            f"46.1 tables at 80 columns: cut {cut or 'none'}; every model name whole: {whole}")  # fmt: skip

    # 46.2 unknown sim: and local: names are refused before anything is written
    refused = []
    for spec in ("sim:nonexistent", "local:nonexistent"):
        where = runs / spec.replace(":", "_")
        r = s.jb("run", "--run", str(where), "--model", spec, "--yes")
        refused.append(r.returncode == 1 and not where.exists() and spec.split(":")[1] in r.stderr)
    s.point(16, all(refused),
            f"46.2 run --model sim:nonexistent / local:nonexistent: refused, nothing written: "
            f"{refused}")  # fmt: skip

    # 46.3 the embedded translator's estimate is in minutes for LLMBar's first 2 items, from its tokens
    tr = s.jb("translate", "--run", str(runs / "tl"), "--dataset", "llmbar", "--data-dir", str(llmbar),
              "--translator", "local", "--limit", "2", "--dry-run")  # fmt: skip
    told = re.search(r"expected time: about (\S+)", tr.stdout + tr.stderr)
    per_token = "s per output token" in tr.stdout + tr.stderr
    minutes = told is not None and "m" in told[1]
    s.point(17, tr.returncode == 0 and per_token and (minutes or llmbar.name != "llmbar"),
            f"46.3 translate --translator local --limit 2 --dry-run: expected {told[1] if told else '?'} "
            f"(from its output tokens: {per_token})")  # fmt: skip

    # 46.4 m-rewardbench: --conditions narrows the languages; a partial snapshot is listed
    snap = s.clone.parent / "mrb"
    make = (f"from pathlib import Path; from tests.data.rewardbench_fixture import write_snapshot; "
            f"write_snapshot(Path({str(snap)!r}), languages=('zh', 'ja'))")  # fmt: skip
    path = f"{s.clone}:{s.clone / 'src'}"
    subprocess.run([sys.executable, "-c", make], cwd=s.clone, env={**s.env, "PYTHONPATH": path}, check=True,
                   timeout=300)  # fmt: skip
    r = s.jb("run", "--run", str(runs / "mrb"), "--dataset", "m-rewardbench", "--data-dir", str(snap),
             "--conditions", "zh,ja", "--model", "sim:unbiased", "--dry-run")  # fmt: skip
    shown = s.jb("data", "show", "m-rewardbench", "--data-dir", str(snap))
    listed = "holds 2 of its 23 languages" in shown.stdout + shown.stderr
    s.point(18, r.returncode == 0 and "lacks" not in r.stderr and shown.returncode == 0 and listed,
            f"46.4 m-rewardbench --conditions zh,ja on a zh+ja snapshot: exit {r.returncode}; "
            f"data show lists the 2 languages it holds: {listed}")  # fmt: skip


def quickstart(s: Session, limit: int) -> None:
    clock = time.perf_counter()
    r = s.jb("run", "--limit", str(limit), "--no-cache")
    took = time.perf_counter() - clock
    tail = [
        ln
        for ln in r.stdout.splitlines()
        if ln.startswith(("PASS", "FAIL", "INCONCLUSIVE", "report:", "done in"))
    ]
    print(f"quick start `judgebench run --limit {limit}` (embedded model, installed already): exit "
          f"{r.returncode} in {took:.0f}s; it ends with: {' | '.join(tail)}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
