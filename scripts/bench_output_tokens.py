"""Measure output tokens per judgment for each bundled judge template (issue 18), for real.

Two judges, both offline and both running the embedded Gemma 3 270M:
- `openai-compatible:gemma3-270m`: the chat form of each template, sent through the openai SDK to
  llama.cpp's own OpenAI-compatible HTTP server on 127.0.0.1 (the local wire server: the software
  users run as `llama-server`), with the request exactly as `judge` builds it: JSON mode for the
  default and verdict-only templates, a strict json_schema for the structured one (llama.cpp turns
  it into a grammar). The replies are generated, not canned.
- `local`: the embedded model as `judge` uses it, the completion form with a one-letter verdict.

Each item is judged in both orders with a fresh response cache, so every figure is a paid-for call.
Printed per judge and template: judgments, output tokens per judgment (mean, median, max), the share
that ran into the template's `max_tokens`, the share read as a verdict, and seconds per judgment.
`--write` stores the means in configs/output_tokens.toml, where `judgebench plan` and `--dry-run`
read them for these judges (other judges use the file's stated assumptions or `plan --from-run`).

    python scripts/bench_output_tokens.py [--items 30] [--dataset sample] [--write] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgebench.config.paths import configs_dir
from judgebench.costing.output_tokens import MEASURED_MARKER, measured_path
from judgebench.data.dataset import load_dataset
from judgebench.judge.parse import parse_verdict
from judgebench.judge.templates import JudgeTemplate, load_template
from judgebench.models import local
from judgebench.models.base import ProviderSettings
from judgebench.models.cache import ResponseCache
from judgebench.models.client import ModelClient
from judgebench.models.pricing import PriceTable
from judgebench.records import Item

TEMPLATES = ("judge_default", "judge_verdict_only", "judge_verdict_schema")
WIRE_JUDGE = "openai-compatible:gemma3-270m"
LOCAL_JUDGE = "local"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=30, help="items, each judged in both orders")
    parser.add_argument("--dataset", default="sample", help="sample, llmbar, or a file")
    parser.add_argument("--data-dir", default=None, help="a local LLMBar copy for --dataset llmbar")
    parser.add_argument("--write", action="store_true", help="store the means in configs/output_tokens.toml")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser.parse_args(argv)


async def measure(
    judge: str, template: JudgeTemplate, items: list[Item], client: ModelClient
) -> dict[str, Any]:
    """Judge every item in both orders with `template`; the usage and verdicts of those calls."""
    completion = client.traits.completion_only
    tokens: list[int] = []
    capped = valid = 0
    start = time.perf_counter()
    for item in items:
        for output_a, output_b in ((item.output_1, item.output_2), (item.output_2, item.output_1)):
            request = template.render(
                instruction=item.instruction,
                output_a=output_a,
                output_b=output_b,
                language=None,
                completion=completion,
                want_logprobs=client.capabilities.logprobs and completion,
            )
            result = await client.call(request)
            if result.response is None:
                raise SystemExit(f"{judge} {template.name}: item {item.id}: {result.error}")
            tokens.append(result.response.usage.output_tokens)
            capped += result.response.finish_reason == "length" and not completion
            parsed = parse_verdict(result.response.text, template, template.format_for(completion))
            valid += parsed.winner != "invalid"
    seconds = time.perf_counter() - start
    return {
        "judge": judge,
        "template": template.name,
        "form": "completion" if completion else "chat",
        "judgments": len(tokens),
        "mean": round(statistics.fmean(tokens), 2),
        "median": statistics.median(tokens),
        "max": max(tokens),
        "max_tokens": 2 if completion else template.max_tokens,
        "ran_to_max_tokens": round(capped / len(tokens), 4),
        "read_as_verdict": round(valid / len(tokens), 4),
        "seconds_per_judgment": round(seconds / len(tokens), 3),
    }


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    items = load_dataset(args.dataset, data_dir=args.data_dir).items[: args.items]
    engine = local.get_engine("gemma3-270m")
    url, key = engine.openai_endpoint()
    os.environ["OPENAI_COMPATIBLE_API_KEY"] = key  # the engine's per-process key, never stored
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for judge, settings in (
            (WIRE_JUDGE, ProviderSettings(base_url=url, timeout=300.0, max_retries=0)),
            (LOCAL_JUDGE, ProviderSettings(timeout=300.0, max_retries=0)),
        ):
            for name in TEMPLATES:
                template = load_template(configs_dir() / "templates" / f"{name}.toml")
                cache = ResponseCache(Path(tmp) / f"{judge.replace(':', '_')}-{name}.sqlite")
                client = ModelClient(judge, settings, cache=cache, prices=PriceTable.load())
                try:
                    rows.append(await measure(judge, template, items, client))
                finally:
                    await client.aclose()
                print(f"  measured {judge} {name}", file=sys.stderr)
    return rows


def write_measured(rows: list[dict[str, Any]], args: argparse.Namespace) -> Path:
    """Rewrite the measured part of configs/output_tokens.toml (below the marker line)."""
    path = measured_path()
    head = path.read_text(encoding="utf-8").split(MEASURED_MARKER, 1)[0].rstrip("\n")
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    lines = [head, "", MEASURED_MARKER]
    lines.append(
        f"# {when}: python scripts/bench_output_tokens.py --items {args.items} --dataset {args.dataset}"
    )
    for row in rows:
        lines += [
            "",
            "[[measured]]",
            f'judge = "{row["judge"]}"',
            f'template = "{row["template"]}"',
            f"output_tokens = {row['mean']}",
            f"judgments = {row['judgments']}",
            f"max = {row['max']}",
            f"ran_to_max_tokens = {row['ran_to_max_tokens']}",
            f'measured = "{when}, {args.dataset}"',
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = asyncio.run(run(args))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'judge':32} {'template':26} {'n':>4} {'mean':>7} {'median':>6} {'max':>5} {'to max':>7} "
              f"{'verdict':>7} {'s/call':>6}")  # fmt: skip
        for r in rows:
            print(
                f"{r['judge']:32} {r['template']:26} {r['judgments']:>4} {r['mean']:>7.1f} {r['median']:>6} "
                f"{r['max']:>5} {r['ran_to_max_tokens']:>7.1%} {r['read_as_verdict']:>7.1%} "
                f"{r['seconds_per_judgment']:>6.2f}"
            )
    if args.write:
        print(f"wrote {write_measured(rows, args)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
