"""How long a stage's calls will take: said before they start, so that nobody waits 36 minutes for
what the README called 3.

The time is calls x seconds per call, divided among the calls that run at once (--concurrency, for a
provider over the network) and held to --rpm; the embedded model runs one call at a time on this
machine's cores, so its seconds per call grow with the machine's load. Seconds per call come from
configs/call_seconds.toml: a measurement for the model where there is one (scaled to this machine's
cores and load average for a model that runs in this process), else the file's stated assumption.
Each figure names its source; the progress line corrects it with the rate measured on the first calls.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.errors import InputError
from judgebench.models import traits_of
from judgebench.models.base import ProviderSettings
from judgebench.models.provider_registry import ModelSpec
from judgebench.progress import about
from judgebench.records.numbers import USER_NUMBERS


class MeasuredRate(BaseModel):
    model_config = USER_NUMBERS

    judge: str
    stage: str = "judge"
    seconds_per_call: float = Field(ge=0)  # what a call takes whatever its length
    # a model in this process (llama.cpp) reads the prompt and writes the reply token by token: per
    # prompt token (prefill) and per output token (decode), on top of the call's
    seconds_per_input_token: float = Field(default=0.0, ge=0)
    seconds_per_output_token: float = Field(default=0.0, ge=0)
    cores: int = Field(ge=1)
    load: float = Field(ge=0)  # the 1-minute load average while it was measured
    # p in ((load + 1) / cores) ** p: how steeply a shared machine slows it (measured)
    load_exponent: float = Field(default=2.0, ge=0)
    measured: str = ""


class AfterJudging(BaseModel):
    """A stage that makes no call (report, bbe): its seconds for a run of N judgments, measured."""

    model_config = USER_NUMBERS

    fixed: float = Field(ge=0)  # seconds whatever the size (imports, figures)
    per_million: float = Field(ge=0)  # seconds per million judgments
    cores: int = Field(ge=1)
    load: float = Field(ge=0)
    measured: str = ""


class RateTable(BaseModel):
    model_config = USER_NUMBERS

    assumed: dict[str, dict[str, float]]  # stage -> provider or "default" -> seconds per call
    measured: list[MeasuredRate] = Field(default_factory=list)
    after: dict[str, AfterJudging] = Field(default_factory=dict)


class Duration(BaseModel):
    """The expected wall time of one model's calls in one stage, and what it rests on."""

    model: str
    calls: int
    seconds: float
    per_call: float  # seconds per call, before dividing among concurrent calls
    at_once: int  # calls in flight together
    source: str


def table_path() -> Path:
    return configs_dir() / "call_seconds.toml"


def load_rates(path: Path | None = None) -> RateTable:
    return load_config(path or table_path(), RateTable)


def machine_slowdown(cores: int, load: float, exponent: float = 2.0) -> float:
    """How much slower a CPU-bound call runs than on an idle machine of `cores` cores at this 1-minute
    load average: ((load + 1) / cores) ** exponent, at least 1. llama.cpp's threads wait on each
    other, so sharing the cores costs more than the share (exponent > 1); the exponent is measured by
    scripts/measure_call_seconds.py. The first calls' measured pace replaces it on the progress line."""
    return float(max(1.0, (load + 1.0) / cores) ** exponent)


def _here() -> tuple[int, float]:
    try:
        load = os.getloadavg()[0]
    except OSError:  # not on every platform
        load = 0.0
    return os.cpu_count() or 1, load


def seconds_per_call(
    model: str, spec: ModelSpec, stage: str, output_tokens: float = 0.0, input_tokens: float = 0.0
) -> tuple[float, str]:
    """Seconds one call of `model` (a judges.toml name or the spec) takes, and where that comes from.
    `input_tokens`, `output_tokens`: one call's prompt and reply, for a measurement that times them
    (a translation's reply is as long as its source: minutes on the embedded model, not seconds; a
    judgment's prompt is most of its time)."""
    rates = load_rates()
    in_process = traits_of(spec).in_process
    for entry in rates.measured:
        if entry.stage == stage and entry.judge in (model, spec.text):
            base = entry.seconds_per_call + entry.seconds_per_output_token * output_tokens
            base += entry.seconds_per_input_token * input_tokens
            source = f"measured {entry.measured} on {entry.cores} cores at load {entry.load:g}"
            source += _per_token(entry, input_tokens, output_tokens)
            if not in_process:
                return base, source
            cores, load = _here()
            slower = machine_slowdown(cores, load, entry.load_exponent)
            factor = slower / machine_slowdown(entry.cores, entry.load, entry.load_exponent)
            source += f"; here {cores} cores at load {load:.1f}"
            if abs(factor - 1.0) > 0.1:
                source += f", x{factor:.1f}"
            return base * factor, source
    assumed = rates.assumed.get(stage, {})
    key = spec.provider if spec.provider in assumed else "default"
    if key not in assumed:
        raise InputError(f"no [assumed.{stage}] default seconds per call", path=str(table_path()))
    what = "an API call" if key == "default" else spec.provider
    return assumed[key], f"assumed for {what} in configs/{table_path().name}"


def _per_token(entry: MeasuredRate, input_tokens: float, output_tokens: float) -> str:
    parts = []
    if entry.seconds_per_input_token:
        parts.append(f"{entry.seconds_per_input_token:g} s per prompt token, {input_tokens:.0f} a call")
    if entry.seconds_per_output_token:
        parts.append(f"{entry.seconds_per_output_token:g} s per output token, {output_tokens:.0f} a call")
    return f" ({'; '.join(parts)})" if parts else ""


def expected(
    model: str,
    spec: ModelSpec,
    settings: ProviderSettings,
    calls: int,
    stage: str,
    *,
    output_tokens: int = 0,
    input_tokens: int = 0,
) -> Duration:
    """The wall time of `calls` calls of one model (`input_tokens` in all their prompts,
    `output_tokens` in all their replies): one at a time in this process, else spread over
    --concurrency and held to --rpm."""
    share = 1.0 / calls if calls else 0.0
    per_call, source = seconds_per_call(model, spec, stage, output_tokens * share, input_tokens * share)
    at_once = 1 if traits_of(spec).in_process else max(1, settings.concurrency)
    seconds = calls * per_call / at_once
    if settings.rpm:
        seconds = max(seconds, calls / settings.rpm * 60.0)
    return Duration(
        model=model, calls=calls, seconds=seconds, per_call=per_call, at_once=at_once, source=source
    )


def announce(durations: list[Duration], stage: str) -> str:
    """The line printed before a stage's first call (the longest judge sets the stage's time)."""
    calls = sum(d.calls for d in durations)
    parts = "; ".join(
        f"{d.model}: {d.calls:,} calls x {_seconds(d.per_call)} s"
        + (f" / {d.at_once} at once" if d.at_once > 1 else "")
        + f", {d.source}"
        for d in durations
    )
    return f"{stage}: {calls:,} calls, expected {about(stage_time(durations))} ({parts})"


def _seconds(value: float) -> str:
    """0.69, 2.6, 15, 150: two significant figures, never an exponent."""
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def stage_time(durations: list[Duration]) -> float:
    """A stage's judges run side by side: the longest sets its time."""
    return max((d.seconds for d in durations), default=0.0)


def after_judging(stage: str, judgments: int) -> tuple[float, str] | None:
    """The seconds a stage that makes no call (`report`, `bbe`) takes on `judgments` judgments, and
    what that rests on; None when configs/call_seconds.toml has no [after.STAGE]. Scaled to this
    machine's load in proportion ((load + 1) / cores, at least 1): Python work on a shared core, not
    llama.cpp's threads waiting on each other."""
    entry = load_rates().after.get(stage)
    if entry is None:
        return None
    cores, load = _here()
    factor = max(1.0, (load + 1.0) / cores) / max(1.0, (entry.load + 1.0) / entry.cores)
    seconds = (entry.fixed + entry.per_million * judgments / 1e6) * factor
    source = f"measured {entry.measured} on {entry.cores} cores at load {entry.load:g}"
    source += f"; here {cores} cores at load {load:.1f}"
    source += f", x{factor:.1f}" if abs(factor - 1.0) > 0.1 else ""
    return seconds, source

