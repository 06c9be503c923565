"""Measure what one call of the embedded model (`local`) takes on this machine, for the time estimates
(configs/call_seconds.toml): seconds per prompt token (prefill), per output token (decode) and per call
(the rest), and how much slower all of it runs when the machine's cores are shared.

A call's time is fitted as  overhead + prefill x prompt tokens + decode x output tokens,  by least
squares over calls of several prompt lengths (1 output token) and a few replies of 64 tokens. The
shipped judge prompt on a ~300-token item is timed too (through LocalProvider, as a run makes it), to
check the fit predicts a real call. With --busy 0,2 the same is measured with 0 and then 2 busy
processes beside it (each level after a warm-up, so the 1-minute load average has caught up), and the
exponent p of  slowdown = ((load + 1) / cores) ** p  is fitted to the judge calls' medians. Every level
records `uptime`: the machine is shared, and its load is what the figures depend on.

    python scripts/measure_call_seconds.py                  # at the present load, ~1 minute
    python scripts/measure_call_seconds.py --busy 0,2 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import time
from typing import Any

import numpy as np

from judgebench.config.paths import configs_dir
from judgebench.models import local
from judgebench.models.base import ModelRequest, ProviderSettings

ITEM = {
    "instruction": "Write a short paragraph explaining why the sky is blue, under 80 words.",
    "output_a": (
        "The sky looks blue because sunlight is made of many colours, and when it passes through the "
        "atmosphere the tiny gas molecules scatter the short blue wavelengths much more strongly than the "
        "long red ones. This effect, called Rayleigh scattering, sends blue light towards our eyes."
    ),
    "output_b": (
        "The sky is blue because it reflects the colour of the oceans, which cover most of the planet. "
        "Sunlight bounces off the water and up into the atmosphere, where clouds spread the blue colour."
    ),
}
FILLER = "The quick brown fox jumps over the lazy dog near the river bank. " * 200
PROMPT_LENGTHS = (64, 512)
DECODE_TOKENS = 16


def spin() -> None:  # a busy process: what another helper's test run is to llama.cpp's threads
    while True:
        pass


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def timed(engine: local.LocalEngine, ids: list[int], out: int) -> tuple[float, int, int, float]:
    """One call's seconds, prompt and output tokens, and the 1-minute load average as it ended."""
    body = {"prompt": ids, "max_tokens": out, "temperature": 0, "cache_prompt": False, "ignore_eos": True}
    raw, seconds = engine.complete(body)
    return seconds, raw["usage"]["prompt_tokens"], raw["usage"]["completion_tokens"], os.getloadavg()[0]


def slowdown(load: Any, cores: int, exponent: Any) -> Any:
    """configs/call_seconds.toml's scaling: ((load + 1) / cores) ** exponent, at least 1."""
    return np.maximum(1.0, (np.asarray(load) + 1.0) / cores) ** exponent


def fit(rows: list[tuple[float, int, int, float]], cores: int) -> dict[str, float]:
    """overhead, prefill and decode seconds at an idle machine and the load exponent, fitted to every
    call at once (each with the load average it ran at), in log space so a slow call weighs no more
    than a quick one."""
    from scipy.optimize import curve_fit

    seconds = np.array([r[0] for r in rows])
    x = np.array([[r[1], r[2], r[3]] for r in rows]).T

    def model(x: Any, overhead: float, prefill: float, decode: float, exponent: float) -> Any:
        return np.log(overhead + prefill * x[0] + decode * x[1]) + np.log(slowdown(x[2], cores, exponent))

    start = [0.05, 0.002, 0.05, 1.0]
    bounds = ([1e-4, 1e-6, 1e-4, 0.0], [10.0, 1.0, 10.0, 4.0])
    (overhead, prefill, decode, exponent), _ = curve_fit(model, x, np.log(seconds), p0=start, bounds=bounds)
    return {
        "overhead_s": float(overhead),
        "seconds_per_input_token": float(prefill),
        "seconds_per_output_token": float(decode),
        "load_exponent": float(exponent),
    }


async def judge_calls(provider: local.LocalProvider, repeat: int) -> list[tuple[float, int, float]]:
    """The shipped judge prompt as a run sends it: seconds, prompt tokens, load average."""
    prompt = (configs_dir() / "local_prompts" / "judge.txt").read_text(encoding="utf-8").format(**ITEM)
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        reply = await provider.generate(ModelRequest(prompt=prompt, max_tokens=2, logprobs=True))
        out.append((time.perf_counter() - start, reply.usage.input_tokens, os.getloadavg()[0]))
    return out


def measure_level(engine: local.LocalEngine, provider: local.LocalProvider, repeat: int) -> dict[str, Any]:
    """One load level: calls of several prompt lengths and a few long replies, then judge calls."""
    up = uptime()
    rows: list[tuple[float, int, int, float]] = []
    all_ids = engine.tokenize(FILLER)
    for length in PROMPT_LENGTHS:
        for _ in range(repeat):
            rows.append(timed(engine, all_ids[:length], 1))
    for _ in range(repeat):
        rows.append(timed(engine, all_ids[:32], DECODE_TOKENS))
    return {"uptime": up, "rows": rows, "judge": asyncio.run(judge_calls(provider, repeat)), "end": uptime()}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="gemma3-270m")
    parser.add_argument("--repeat", type=int, default=2, help="calls per prompt length, and judge calls")
    parser.add_argument("--busy", default="0", help="busy processes beside it, one level each (e.g. 0,2)")
    parser.add_argument("--warmup", type=float, default=45.0, help="seconds a busy level runs first")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    start = time.perf_counter()
    engine = local.get_engine(args.model)
    provider = local.LocalProvider(args.model, ProviderSettings())
    levels = []
    for busy in (int(b) for b in args.busy.split(",")):
        workers = [multiprocessing.Process(target=spin, daemon=True) for _ in range(busy)]
        for worker in workers:
            worker.start()
        try:
            if busy:
                time.sleep(args.warmup)
            levels.append({"busy": busy, **measure_level(engine, provider, args.repeat)})
        finally:
            for worker in workers:
                worker.terminate()
                worker.join()
    rows = [row for level in levels for row in level["rows"]]
    fitted = fit(rows, cores)
    checks = []
    for level in levels:
        for seconds, tokens, load in level["judge"]:
            base = fitted["overhead_s"] + fitted["seconds_per_input_token"] * tokens
            base += fitted["seconds_per_output_token"] * 2
            predicted = base * float(slowdown(load, cores, fitted["load_exponent"]))
            checks.append({"tokens": tokens, "load": load, "measured_s": seconds, "predicted_s": predicted})
    figures = {
        "cores": cores,
        "load_s": engine.load_s,
        "fit_at_idle": fitted,
        "judge_calls": checks,
        "levels": [{k: v for k, v in lv.items() if k != "judge"} for lv in levels],
        "wall_s": time.perf_counter() - start,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{cores} cores; model loaded in {engine.load_s:.1f} s; {len(rows)} calls fitted")
    for level in levels:
        loads = [r[3] for r in level["rows"]]
        print(f"busy {level['busy']}: load {min(loads):.2f}-{max(loads):.2f}; {level['uptime']}")
    print(
        f"idle machine: {fitted['overhead_s']:.3f} s a call + "
        f"{fitted['seconds_per_input_token'] * 1000:.2f} ms a prompt token + "
        f"{fitted['seconds_per_output_token'] * 1000:.1f} ms an output token; "
        f"x ((load + 1) / {cores}) ** {fitted['load_exponent']:.2f} under load"
    )
    for check in checks:
        print(
            f"judge call ({check['tokens']} prompt tokens) at load {check['load']:.2f}: "
            f"{check['measured_s']:.2f} s measured, {check['predicted_s']:.2f} s by the fit"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
