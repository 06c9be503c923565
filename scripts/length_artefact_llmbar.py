"""LLMBar's length artefact, measured: the length baselines overall and per subset, and for LLMBar's
published evaluators (`judgebench import llmbar-results`) their en accuracy, the split by whether the
gold output is the shorter or the longer one, accuracy over the strongest length rule, and the
readiness baseline's verdict. Prints Markdown tables (docs/guides/length-artefact.md quotes them).

    python scripts/length_artefact_llmbar.py --data-dir PATH/TO/LLMBar [--evaluator GPT-4/Vanilla ...]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from judgebench.analysis import ReportSettings
from judgebench.analysis.findings import ALL, SOURCE
from judgebench.api import analyze_run, import_llmbar_results
from judgebench.records import Metric, MetricRecord

EVALUATORS = ("GPT-4/Vanilla", "GPT-4/Vanilla_NoRules", "ChatGPT/Vanilla", "ChatGPT/Vanilla_NoRules")
SUBSETS = (ALL, "Natural", "Adversarial", "Adversarial/Neighbor", "Adversarial/GPTInst",
           "Adversarial/GPTOut", "Adversarial/Manual")  # fmt: skip
RULES = (
    Metric.LENGTH_BASELINE_SHORTER_CHARS,
    Metric.LENGTH_BASELINE_SHORTER_TOKENS,
    Metric.LENGTH_BASELINE_LONGER_CHARS,
    Metric.LENGTH_BASELINE_LONGER_TOKENS,
)


def _ci(rec: MetricRecord | None, signed: bool = False) -> str:
    if rec is None or rec.value is None:
        return "—"
    fmt = "{:+.3f}" if signed else "{:.3f}"
    text = fmt.format(rec.value)
    if rec.ci_low is not None and rec.ci_high is not None:
        text += f" [{fmt.format(rec.ci_low)}, {fmt.format(rec.ci_high)}]"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a local copy of LLMBar")
    parser.add_argument("--evaluator", action="append", help="LLMBar evaluator, e.g. GPT-4/Vanilla")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap samples (0: none)")
    args = parser.parse_args()
    settings = ReportSettings(bootstrap_samples=args.bootstrap)
    evaluators = args.evaluator or list(EVALUATORS)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        for evaluator in evaluators:
            import_llmbar_results(run, args.data_dir, evaluator)
        analysis = analyze_run(run, settings)
    en = [r for r in analysis.records if r.condition == SOURCE and not r.filtered]
    index = {(r.judge, r.metric, r.subset): r for r in en}
    first = evaluators[0]
    print("## Length baselines (en, per judgment over both orders; equal lengths score half)\n")
    print("| Subset | n | " + " | ".join(str(m) for m in RULES) + " |")
    print("|---|---:|" + "---:|" * len(RULES))
    for subset in SUBSETS:
        recs = [index.get((first, m, subset)) for m in RULES]
        n = recs[0].n if recs[0] else 0
        print(f"| {subset} | {n} | " + " | ".join(_ci(r) for r in recs) + " |")
    print("\n## Published evaluators (en)\n")
    print("| Evaluator | Subset | Strict accuracy | Gold shorter | Gold longer | Over strongest rule | n |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for evaluator in evaluators:
        for subset in SUBSETS:
            acc = index.get((evaluator, Metric.STRICT_ACCURACY, subset))
            short = index.get((evaluator, Metric.ACCURACY_GOLD_SHORTER, subset))
            long = index.get((evaluator, Metric.ACCURACY_GOLD_LONGER, subset))
            margin = index.get((evaluator, Metric.ACCURACY_OVER_LENGTH_BASELINE, subset))
            cells = [_ci(acc), _ci(short) + f" (n={short.n if short else 0})",
                     _ci(long) + f" (n={long.n if long else 0})", _ci(margin, signed=True)]  # fmt: skip
            print(f"| {evaluator} | {subset} | " + " | ".join(cells) + f" | {acc.n if acc else 0} |")
    print("\n## Readiness baseline (en)\n")
    for verdict in analysis.readiness:
        accuracy = [r for r in verdict.reasons if "strict accuracy" in r]
        print(f"- {verdict.judge}: baseline **{verdict.baseline}**:")
        for reason in accuracy:
            print(f"  - {reason}")


if __name__ == "__main__":
    main()
