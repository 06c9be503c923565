"""Time `analyze()` (and the report writer, when present) on a full-size synthetic Judge-LS run.

13,408 judgments = 4 judges x 419 items x (3 conditions x 2 orders + 2 tie-probes), with ties, invalid
answers, missing calls and stated confidences mixed in, and 19 audit-flagged items. The writer also gets
the item explorer's data: texts of LLMBar-like length for every item in every condition (about 6 MB)
and the audit flags. Prints seconds and peak memory (tracemalloc peak of Python allocations and the
process's max RSS). Usage:

    python scripts/bench_report.py [--samples 1000] [--repeat 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from judgebench.analysis import ReportSettings, analyze
from judgebench.records import AuditFlag, Judgment
from judgebench.report.explorer import ExplorerData, ItemTexts
from judgebench.store.run_folder import RunDir

SUBSETS = {
    "Natural": 100,
    "Adversarial/Neighbor": 134,
    "Adversarial/GPTInst": 92,
    "Adversarial/GPTOut": 47,
    "Adversarial/Manual": 46,
}
JUDGES = [
    "openai:gpt-4.1-mini",
    "anthropic:claude-haiku-4-5",
    "google:gemini-2.5-flash",
    "deepseek:deepseek-v4-flash",
]
CONDITIONS = ["en", "zh", "ls"]


def synthetic_judgments(seed: int = 0) -> tuple[list[Judgment], list[str]]:
    """A plausible run: accurate-ish judges that flip and tie sometimes, a few invalid and missing calls."""
    rng = np.random.default_rng(seed)
    items = [(f"{s}/{i}", s, int(rng.integers(1, 3))) for s, n in SUBSETS.items() for i in range(n)]
    out: list[Judgment] = []
    for judge in JUDGES:
        for item_id, subset, label in items:
            for cond in CONDITIONS:
                for order in ("orig", "swap"):
                    u = rng.random()
                    if u < 0.01:
                        out.append(
                            _j(
                                judge,
                                item_id,
                                subset,
                                "pair",
                                cond,
                                order,
                                None,
                                None,
                                label,
                                error="HTTP 500",
                            )
                        )
                        continue
                    if u < 0.02:
                        out.append(
                            _j(judge, item_id, subset, "pair", cond, order, "invalid", "invalid", label)
                        )
                        continue
                    r = rng.random()
                    verdict = str(label) if r < 0.8 else ("tie" if r < 0.87 else str(3 - label))
                    winner = (
                        "Tie"
                        if verdict == "tie"
                        else (
                            ("A" if verdict == "1" else "B")
                            if order == "orig"
                            else ("B" if verdict == "1" else "A")
                        )
                    )
                    out.append(
                        _j(
                            judge,
                            item_id,
                            subset,
                            "pair",
                            cond,
                            order,
                            winner,
                            verdict,
                            label,
                            confidence=float(np.clip(rng.normal(0.85, 0.1), 0, 1)),
                        )
                    )
            for order in ("en_zh", "zh_en"):
                r = rng.random()
                verdict = "tie" if r < 0.9 else ("zh" if r < 0.96 else ("en" if r < 0.99 else "invalid"))
                winner = {"tie": "Tie", "invalid": "invalid"}.get(verdict) or (
                    "A" if (verdict == "en") == (order == "en_zh") else "B"
                )
                out.append(_j(judge, item_id, subset, "tie_probe", "zh", order, winner, verdict, label))
    flagged = [items[i][0] for i in rng.choice(len(items), size=19, replace=False)]
    return out, flagged


VOCABULARY = (
    "the of and to in is that for it as with was on be by this are or from at an which but not model "
    "answer output instruction response step result value list code function number text"
)
WORDS = VOCABULARY.split()
# characters of an LLMBar-like item, and each condition's length relative to English
TEXT_CHARS = {"instruction": 250, "output_1": 700, "output_2": 700}
CONDITION_SCALE = {"en": 1.0, "zh": 0.4, "ls": 0.7}


def _text(rng: np.random.Generator, chars: int) -> str:
    words = rng.choice(WORDS, size=max(1, chars // 5))
    return " ".join(words)[:chars]


def synthetic_explorer(judgments: list[Judgment], flagged: list[str], seed: int = 1) -> ExplorerData:
    """The explorer's inputs for the synthetic run: every item's texts in each condition, audit flags."""
    rng = np.random.default_rng(seed)
    items = list(dict.fromkeys(j.item_id for j in judgments))
    texts = {
        (item, cond): ItemTexts(*(_text(rng, int(n * scale)) for n in TEXT_CHARS.values()))
        for item in items
        for cond, scale in CONDITION_SCALE.items()
    }
    audit = [
        AuditFlag(item_id=item, condition="zh", field="output_1", rule="length_ratio", detail="0.21 < 0.3")
        for item in flagged
    ]
    return ExplorerData(judgments, texts, audit, CONDITIONS)


def _j(
    judge: str,
    item_id: str,
    subset: str,
    kind: str,
    cond: str,
    order: str,
    winner: str | None,
    verdict: str | None,
    label: int,
    *,
    error: str | None = None,
    confidence: float | None = None,
) -> Judgment:
    return Judgment.model_validate(
        {
            "judge": judge,
            "item_id": item_id,
            "subset": subset,
            "kind": kind,
            "condition": cond,
            "order": order,
            "raw": None if verdict is None else f'{{"winner": "{winner}"}}',
            "winner": winner,
            "verdict": verdict,
            "error": error,
            "label": label,
            "confidence": confidence,
        }
    )


def _maxrss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024.0 / (1024.0 if sys.platform == "darwin" else 1.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=1000, help="bootstrap replicates")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="folder for the report writer's files")
    ap.add_argument("--no-explorer", action="store_true", help="write report.html without the explorer")
    args = ap.parse_args()
    judgments, flagged = synthetic_judgments()
    print(f"{len(judgments)} judgments, {len(flagged)} flagged items, {args.samples} bootstrap samples")
    settings = ReportSettings(bootstrap_samples=args.samples)
    times, cpu = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        analysis = analyze(judgments, flagged_items=flagged, settings=settings)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    tracemalloc.start()  # a separate run: tracing slows Python down about threefold
    analyze(judgments, flagged_items=flagged, settings=settings)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"analyze(): best {min(times):.2f} s, worst {max(times):.2f} s over {args.repeat} runs; "
        f"{len(analysis.records)} records; CPU time best {min(cpu):.2f} s (wall time grows on a busy machine)"
    )
    print(f"peak traced Python memory {peak / 2**20:.0f} MB during analyze(); max RSS {_maxrss_mb():.0f} MB")
    write = _report_writer()
    if write is not None:
        out = args.out or Path(tempfile.mkdtemp(prefix="bench_report_"))
        explorer = synthetic_explorer(judgments, flagged) if not args.no_explorer else None
        t0, c0 = time.perf_counter(), time.process_time()
        write(RunDir(out), analysis, explorer=explorer)
        writer_s = time.perf_counter() - t0
        print(
            f"report writer: {writer_s:.2f} s wall, {time.process_time() - c0:.2f} s CPU "
            f"-> {out}; max RSS {_maxrss_mb():.0f} MB"
        )
        total = min(times) + writer_s
        ok = total < 3.0 and _maxrss_mb() < 500
        print(
            f"report total (best analyze + writer): {total:.2f} s against the 3 s target, max RSS "
            f"{_maxrss_mb():.0f} MB against 500 MB: {'met' if ok else 'MISSED'} (load average "
            f"{os.getloadavg()[0]:.1f}; a busy machine inflates wall time)"
        )
    else:
        print("report writer: not available (judgebench.report.write_report missing); analyze() timed only")


def _report_writer() -> Callable[..., object] | None:
    """The report helper's writer when it exists (it lands in the same issue)."""
    try:
        from judgebench.report import write_report
    except ImportError:
        return None
    return write_report  # type: ignore[no-any-return]


if __name__ == "__main__":
    main()
