"""Render a report.html with headless Chromium into a PNG, to look at what a user will see.

    python scripts/screenshot_report.py --demo [--out DIR]       # a realistic synthetic 4-judge run
    python scripts/screenshot_report.py --html RUN/report.html   # any existing report

The demo's judges are simulated with rates near the published Judge-LS figures (flip rates 11-15%,
accuracy highest in en, tie-probes mostly ties), on LLMBar's subset sizes, with a few invalid answers,
missing calls and audit-flagged items, so every section and plot has realistic content. Needs Debian's
`chromium` (apt-get install chromium); the browser runs with networking features off and a throwaway
profile. Prints the screenshot's path; exits non-zero if Chromium is missing or fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from judgebench.records import AuditFlag, Judgment
from judgebench.report.explorer import ExplorerData, ItemTexts

SUBSETS = {
    "Natural": 100,
    "Adversarial/Neighbor": 134,
    "Adversarial/GPTInst": 92,
    "Adversarial/GPTOut": 47,
    "Adversarial/Manual": 46,
}
# judge -> (accuracy in en, accuracy drop per target, flip propensity, position noise, tie-probe tie rate)
DEMO_JUDGES: dict[str, tuple[float, float, float, float, float]] = {
    "openai:gpt-4.1-mini": (0.86, 0.03, 0.075, 0.07, 0.956),
    "anthropic:claude-haiku-4-5": (0.84, 0.025, 0.074, 0.06, 0.93),
    "google:gemini-2.5-flash": (0.88, 0.02, 0.057, 0.05, 0.94),
    "deepseek:deepseek-v4-flash": (0.90, 0.02, 0.056, 0.055, 0.975),
}
SUBSET_DIFFICULTY = {
    "Natural": 0.06,
    "Adversarial/Neighbor": -0.04,
    "Adversarial/GPTInst": -0.02,
    "Adversarial/GPTOut": -0.12,
    "Adversarial/Manual": -0.08,
}


def demo_judgments(seed: int = 7) -> tuple[list[Judgment], list[str]]:
    """A Judge-LS run: each item has a latent "clear" preference per judge, perturbed per condition/order."""
    rng = np.random.default_rng(seed)
    items = [(f"{s}/{i}", s, int(rng.integers(1, 3))) for s, n in SUBSETS.items() for i in range(n)]
    out: list[Judgment] = []
    for judge, (acc, drop, flip, pos_noise, tie_rate) in DEMO_JUDGES.items():
        for item_id, subset, label in items:
            p_right = float(np.clip(acc + SUBSET_DIFFICULTY[subset], 0.4, 0.99))
            base = str(label) if rng.random() < p_right else str(3 - label)
            for c_index, cond in enumerate(("en", "zh", "ls")):
                verdict_c = base
                if cond != "en" and rng.random() < flip:
                    verdict_c = (
                        "tie"
                        if rng.random() < 0.3
                        else (str(label) if rng.random() < 0.4 else str(3 - label))
                    )
                if cond != "en" and verdict_c == str(label) and rng.random() < drop:
                    verdict_c = str(3 - label)
                for order in ("orig", "swap"):
                    verdict = verdict_c
                    noise = pos_noise * (1.0 + 0.4 * c_index)
                    if rng.random() < noise:  # position bias: pick whatever is shown first
                        verdict = "1" if order == "orig" else "2"
                    u = rng.random()
                    if u < 0.004:
                        out.append(
                            _judgment(
                                judge, item_id, subset, "pair", cond, order, None, label, error="HTTP 503"
                            )
                        )
                        continue
                    if u < 0.010:
                        verdict = "invalid"
                    out.append(
                        _judgment(judge, item_id, subset, "pair", cond, order, verdict, label, rng=rng)
                    )
            for order in ("en_zh", "zh_en"):
                r = rng.random()
                verdict = "tie" if r < tie_rate else ("zh" if r < tie_rate + (1 - tie_rate) * 0.65 else "en")
                out.append(_judgment(judge, item_id, subset, "tie_probe", "zh", order, verdict, label))
    flagged = sorted(items[i][0] for i in rng.choice(len(items), size=19, replace=False))
    return out, flagged


def _judgment(
    judge: str,
    item_id: str,
    subset: str,
    kind: str,
    cond: str,
    order: str,
    verdict: str | None,
    label: int,
    *,
    error: str | None = None,
    rng: np.random.Generator | None = None,
) -> Judgment:
    winner: str | None
    if verdict is None:
        winner = None
    elif verdict in ("tie", "invalid"):
        winner = "Tie" if verdict == "tie" else "invalid"
    elif kind == "pair":
        winner = "A" if (verdict == "1") == (order == "orig") else "B"
    else:
        winner = "A" if (verdict == "en") == (order == "en_zh") else "B"
    confidence = None
    if rng is not None and verdict not in (None, "invalid"):
        confidence = float(np.clip(rng.normal(0.9 if verdict == str(label) else 0.78, 0.08), 0.05, 1.0))
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
            "parse_error": "no winner field" if verdict == "invalid" else None,
            "error": error,
            "label": label,
            "confidence": confidence,
            "usage": {"input_tokens": 900, "output_tokens": 60} if verdict is not None else None,
            "cost_usd": 0.0004 if verdict is not None else None,
        }
    )


DEMO_TEXTS = {
    "en": (
        "Rewrite the sentence in the passive voice: {n} cats chased the dog.",
        "The dog was chased by {n} cats.",
        "{n} cats chased the dog quickly.",
    ),
    "zh": (
        "将句子改写为被动语态：{n} 只猫追赶了那只狗。",
        "那只狗被 {n} 只猫追赶了。",
        "{n} 只猫很快地追赶了那只狗。",
    ),
    "ls": (
        "Rewrite the sentence 为被动语态: {n} cats chased the dog.",
        "The dog 被 {n} cats 追赶了.",
        "{n} cats 很快地 chased the dog.",
    ),
}


def demo_explorer(judgments: list[Judgment], flagged: list[str]) -> ExplorerData:
    """The item explorer's inputs for the demo: short texts per item and condition, the audit flags."""
    items = list(dict.fromkeys(j.item_id for j in judgments))
    texts = {
        (item, cond): ItemTexts(*(t.format(n=n + 2) for t in triple))
        for n, item in enumerate(items)
        for cond, triple in DEMO_TEXTS.items()
    }
    audit = [
        AuditFlag(item_id=item, condition="zh", field="output_2", rule="length_ratio", detail="0.21 < 0.3")
        for item in flagged
    ]
    return ExplorerData(judgments, texts, audit, list(DEMO_TEXTS))


def write_demo(out: Path, *, samples: int = 1000) -> Path:
    """Analyse the demo judgments and write the full report into `out`; returns report.html."""
    from judgebench.analysis import ReportSettings, analyze
    from judgebench.report import write_report
    from judgebench.store.run_folder import RunDir

    judgments, flagged = demo_judgments()
    analysis = analyze(judgments, flagged_items=flagged, settings=ReportSettings(bootstrap_samples=samples))
    paths = write_report(RunDir(out), analysis, explorer=demo_explorer(judgments, flagged))
    assert paths.report_html is not None
    return paths.report_html


def screenshot(
    html: Path,
    png: Path,
    *,
    width: int = 1400,
    height: int = 5000,
    timeout: float = 120.0,
    fragment: str = "",
) -> Path:
    """Headless Chromium, no network features, throwaway profile; the page itself fetches nothing.
    `fragment` (e.g. "#explorer?flipped=1&open=ITEM") picks the explorer's view; the window should be
    taller than the page then, since headless Chromium draws a scrolled viewport blank."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        raise SystemExit("chromium not found: apt-get install -y chromium")
    with tempfile.TemporaryDirectory(prefix="jb-chromium-") as profile:
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--screenshot={png.resolve()}",
            f"--window-size={width},{height}",
            "--virtual-time-budget=5000",  # let the explorer's script draw before the shot
            html.resolve().as_uri() + fragment,
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0 or not png.exists():
        raise SystemExit(f"chromium failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return png


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--demo", action="store_true", help="write and shoot the synthetic 4-judge report")
    src.add_argument("--html", type=Path, help="an existing report.html")
    ap.add_argument("--out", type=Path, default=None, help="folder for the demo run (default: a temp folder)")
    ap.add_argument("--png", type=Path, default=None, help="screenshot path (default: beside the HTML)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=5000)
    ap.add_argument("--samples", type=int, default=1000, help="bootstrap samples for the demo")
    ap.add_argument("--fragment", default="", help="URL fragment, e.g. '#explorer?flipped=1&open=ITEM'")
    args = ap.parse_args()
    if args.demo:
        html = write_demo(args.out or Path(tempfile.mkdtemp(prefix="jb-demo-")), samples=args.samples)
    else:
        html = args.html
        if not html.exists():
            sys.exit(f"{html} does not exist")
    png = args.png or html.with_name("report_screenshot.png")
    print(screenshot(html, png, width=args.width, height=args.height, fragment=args.fragment))


if __name__ == "__main__":
    main()
