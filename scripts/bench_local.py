"""Benchmark the embedded offline model (`local`): what a user waits for on their own machine.

Measures: weights check/assembly, model load, prompt tokens/s (a ~1000-token prompt), output tokens/s
(128 tokens, end-of-text ignored), time per judge call on a typical ~300-token item (the shipped
judge prompt, 2 tokens with top-20 log-probabilities), peak RSS. With --slots N it also runs the same
judge calls through N parallel llama.cpp slots, 2N at a time, and says whether the answers stay
identical to the one-slot answers (they decide whether `local` may run calls concurrently).

    python scripts/bench_local.py [--repeat 5] [--threads N] [--slots 2] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from judgebench.config.paths import configs_dir
from judgebench.models import local
from judgebench.models.base import ModelRequest, ProviderSettings

REPO = Path(__file__).resolve().parents[1]
ITEM = {
    "instruction": (
        "Write a short paragraph explaining why the sky is blue. Mention the role of sunlight and of the "
        "atmosphere, and keep it under 80 words."
    ),
    "output_a": (
        "The sky looks blue because sunlight is made of many colours, and when it passes through the "
        "atmosphere the tiny gas molecules scatter the short blue wavelengths much more strongly than the "
        "long red ones. This effect, called Rayleigh scattering, sends blue light towards our eyes from "
        "every direction, so the whole sky appears blue during the day."
    ),
    "output_b": (
        "The sky is blue because it reflects the colour of the oceans, which cover most of the planet. "
        "Sunlight bounces off the water and up into the atmosphere, where clouds spread the blue colour "
        "across the sky. At sunset the sky turns red because the sun is closer to the ground and heats the "
        "air, which changes its colour."
    ),
}


def peak_rss_mb() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / 1024.0 if sys.platform != "darwin" else usage / (1024.0 * 1024.0)


def judge_prompt() -> str:
    template = (configs_dir() / "local_prompts" / "judge.txt").read_text(encoding="utf-8")
    return template.format(**ITEM)


async def judge_calls(provider: local.LocalProvider, prompt: str, repeat: int) -> tuple[list[float], int]:
    times: list[float] = []
    tokens = 0
    for _ in range(repeat):
        start = time.perf_counter()
        response = await provider.generate(ModelRequest(prompt=prompt, max_tokens=2, logprobs=True))
        times.append(time.perf_counter() - start)
        tokens = response.usage.input_tokens
    return times, tokens


def slots_check(path: Path, slots: int, prompt: str, threads: int | None, calls: int) -> dict[str, Any]:
    """Run `calls` identical judge requests through one slot (in turn) and `slots` slots (at once)."""
    import xllamacpp

    def server(n: int) -> Any:
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = 4096 * n
        params.n_parallel = n
        params.cache_prompt = False
        params.cache_ram_mib = 0
        params.verbosity = -1
        if threads:
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
        return xllamacpp.Server(params)

    body = {
        "prompt": prompt,
        "max_tokens": 2,
        "temperature": 0,
        "seed": 1,
        "cache_prompt": False,
        "logprobs": 20,
    }
    single = server(1)
    start = time.perf_counter()
    reference = [single.handle_completions(dict(body)) for _ in range(calls)]
    sequential_s = time.perf_counter() - start
    del single
    multi = server(slots)
    results: list[Any] = [None] * calls

    def worker(index: int) -> None:
        results[index] = multi.handle_completions(dict(body))

    start = time.perf_counter()
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(calls)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    parallel_s = time.perf_counter() - start
    same = all(
        r["choices"][0]["logprobs"] == reference[0]["choices"][0]["logprobs"] for r in results + reference
    )
    return {
        "slots": slots,
        "calls": calls,
        "sequential_s": sequential_s,
        "parallel_s": parallel_s,
        "identical": same,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="gemma3-270m")
    parser.add_argument("--repeat", type=int, default=5, help="judge calls to time (median reported)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: llama.cpp's choice)")
    parser.add_argument("--slots", type=int, default=0, help="also compare N parallel slots (0: skip)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    args = parser.parse_args()

    figures: dict[str, Any] = {"cpus": os.cpu_count(), "load_average_1m": os.getloadavg()[0]}
    start = time.perf_counter()
    path = local.resolve_model_path(args.model)
    figures["weights_check_s"] = time.perf_counter() - start
    figures["weights"] = str(path)
    figures["weights_mb"] = path.stat().st_size / 1e6

    engine = local.get_engine(args.model, threads=args.threads)
    figures["load_s"] = engine.load_s
    figures["n_ctx"] = engine.n_ctx
    provider = local.LocalProvider(args.model, ProviderSettings())

    long_prompt = (
        (REPO / "README.md").read_text(encoding="utf-8")[:4000] if (REPO / "README.md").exists() else ""
    )
    long_prompt = (long_prompt + " The quick brown fox jumps over the lazy dog." * 200)[:4000]
    ids = engine.tokenize(long_prompt)
    raw, _ = engine.complete({"prompt": ids, "max_tokens": 1, "temperature": 0, "cache_prompt": False})
    figures["prompt_tokens"] = raw["usage"]["prompt_tokens"]
    figures["prompt_tokens_per_s"] = raw["timings"]["prompt_per_second"]

    ids = engine.tokenize("Once upon a time, in a small village by the sea,")
    body = {"prompt": ids, "max_tokens": 128, "temperature": 0, "cache_prompt": False, "ignore_eos": True}
    raw, _ = engine.complete(body)
    figures["output_tokens"] = raw["usage"]["completion_tokens"]
    figures["output_tokens_per_s"] = raw["timings"]["predicted_per_second"]

    prompt = judge_prompt()
    times, tokens = await judge_calls(provider, prompt, args.repeat)
    figures["judge_prompt_tokens"] = tokens
    figures["judge_call_s_median"] = statistics.median(times)
    figures["judge_call_s_min"] = min(times)
    figures["judge_call_s_max"] = max(times)
    figures["peak_rss_mb"] = peak_rss_mb()

    if args.slots > 1:
        local.unload_engines()
        figures["slots_check"] = slots_check(path, args.slots, prompt, args.threads, 2 * args.slots)

    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        width = max(len(key) for key in figures)
        for key, value in figures.items():
            shown = f"{value:.3f}" if isinstance(value, float) else str(value)
            print(f"{key:<{width}}  {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
