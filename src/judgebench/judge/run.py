"""Executing a call plan: every judge at once, each under its own client limits, one record per
answer appended the moment it arrives (so a kill loses nothing received), and a final check that
every planned call has a record."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from judgebench.judge.parse import parse_verdict, verdict_probabilities
from judgebench.judge.plan import PlannedCall
from judgebench.judge.templates import JudgeTemplate
from judgebench.models.base import Message, ModelRequest
from judgebench.models.client import CallResult, ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records import CallKey, Judgment, Usage
from judgebench.rundir import JsonlAppender, last_per_key, now_iso, read_jsonl


@dataclass(frozen=True)
class Execution:
    """How the calls are made: live (default), through the provider's Batch API, or imported from a
    vLLM/OpenAI batch output file; `write_requests` only writes the request file and calls nothing."""

    batch: bool = False
    poll_interval: float = 30.0
    # batch lines that failed, expired or were cancelled: a new batch ("resubmit") or live calls
    batch_failed: Literal["resubmit", "live"] = "resubmit"
    # opt-in (PROTOCOL §3): re-ask a judge whose answer had no readable verdict, up to N times,
    # each re-ask a separate recorded call; 0 keeps an invalid answer as the result
    reask: int = 0
    import_file: Path | None = None
    write_requests: Path | None = None
    log: Callable[[str], None] | None = None


class JudgeOutcome(BaseModel):
    """Totals of one `judge` invocation, per judge, for the manifest and the closing message."""

    planned: int
    already_done: int
    requested: int
    verdicts: int
    invalid: int
    missing: int
    cache_hits: int
    provider_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    failures: list[dict[str, str]]


def _shifted(
    on_result: Callable[[int, CallResult], None], indices: list[int]
) -> Callable[[int, CallResult], None]:
    """Report results of a sub-list of requests under their indices in the full list."""

    def forward(k: int, result: CallResult) -> None:
        on_result(indices[k], result)

    return forward


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text)


def existing_judgments(path: Path) -> dict[CallKey, Judgment]:
    return last_per_key(read_jsonl(path, Judgment), key=lambda j: j.call_key())


def pending_calls(plan: Sequence[PlannedCall], done: Mapping[CallKey, Judgment]) -> list[PlannedCall]:
    """Calls with no record, or whose last record is a failed call (missing): only those run again."""
    return [c for c in plan if c.key not in done or done[c.key].verdict is None]


def build_request(
    call: PlannedCall, template: JudgeTemplate, client: ModelClient, defaults: Mapping[str, Any] | None = None
) -> ModelRequest:
    """The judge prompt for one call; a base model (completion only) gets the completion form."""
    caps = client.capabilities
    completion = caps.completion and not caps.chat
    request = template.render(
        instruction=call.instruction,
        output_a=call.output_a,
        output_b=call.output_b,
        language=call.language,
        completion=completion,
        want_logprobs=caps.logprobs,
        temperature=(defaults or {}).get("temperature", 0.0),
        max_tokens=None if completion else (defaults or {}).get("max_tokens"),
    )
    request.context = call.context()
    return request


def reask_request(request: ModelRequest, invalid: Judgment) -> ModelRequest:
    """The conversation so far plus a request to answer again in the template's format."""
    messages = [
        *(request.messages or []),
        Message(role="assistant", content=invalid.raw or ""),
        Message(
            role="user",
            content=f"Your reply could not be read ({invalid.parse_error}). "
            "Answer again with only the verdict in the requested format.",
        ),
    ]
    return request.model_copy(update={"messages": messages})


def to_judgment(call: PlannedCall, result: CallResult, template: JudgeTemplate, completion: bool) -> Judgment:
    base: dict[str, Any] = {
        "judge": call.judge,
        "item_id": call.item_id,
        "subset": call.subset,
        "kind": call.kind,
        "condition": call.condition,
        "order": call.order,
        "label": call.label,
        "cache_key": result.cache_key,
        "prompt_hash": result.prompt_hash,
        "batch_id": result.batch_id,
        "custom_id": result.custom_id,
        "template": template.name,
        "params": result.params_sent,
        "created_at": now_iso(),
    }
    response = result.response
    if response is None:
        return Judgment(**base, error=result.error or "call failed")
    parsed = parse_verdict(response.text, template, template.format_for(completion))
    parse_error = parsed.parse_error
    if response.finish_reason in {"refusal", "safety"} and parsed.winner == "invalid":
        parse_error = f"judge declined ({response.finish_reason}): {parse_error}"
    probs = verdict_probabilities(response.logprobs, response.text)
    return Judgment(
        **base,
        raw=response.text,
        winner=parsed.winner,
        verdict=call.verdict_for(parsed.winner),
        parse_error=parse_error,
        confidence=parsed.confidence,
        reason=parsed.reason,
        prob_a=probs[0] if probs else None,
        prob_b=probs[1] if probs else None,
        prob_tie=probs[2] if probs else None,
        model=response.model,
        usage=response.usage,
        cost_usd=result.cost_usd,
        latency_s=response.latency_s,
        finish_reason=response.finish_reason,
        from_cache=result.from_cache,
    )


async def execute_plan(
    plan: Sequence[PlannedCall],
    clients: Mapping[str, ModelClient],
    template: JudgeTemplate,
    judgments_path: Path,
    *,
    progress: ProgressReporter | None = None,
    request_defaults: Mapping[str, Mapping[str, Any]] | None = None,
    execution: Execution | None = None,
) -> dict[str, JudgeOutcome]:
    """Run what is pending for every judge concurrently; return per-judge totals."""
    done = existing_judgments(judgments_path)
    todo = pending_calls(plan, done)
    by_judge: dict[str, list[PlannedCall]] = {}
    for call in todo:
        by_judge.setdefault(call.judge, []).append(call)
    counts: dict[str, Counter[str]] = {name: Counter() for name in clients}
    usage: dict[str, Usage] = {name: Usage() for name in clients}
    cost: dict[str, float] = dict.fromkeys(clients, 0.0)

    with JsonlAppender(judgments_path) as out:

        async def run_one(name: str, calls: list[PlannedCall]) -> None:
            client = clients[name]
            caps = client.capabilities
            completion = caps.completion and not caps.chat
            defaults = (request_defaults or {}).get(name)
            requests = [build_request(c, template, client, defaults) for c in calls]

            latest: dict[int, Judgment] = {}
            rounds: dict[int, int] = {}

            def on_result(index: int, result: CallResult) -> None:
                judgment = to_judgment(calls[index], result, template, completion)
                if rounds.get(index):
                    judgment.reask = rounds[index]
                    if latest[index].verdict == "invalid":
                        counts[name]["invalid"] -= 1
                latest[index] = judgment
                out.append(judgment)
                tally = counts[name]
                tally["cache_hits" if result.from_cache else "provider_calls"] += 1 if result.response else 0
                if judgment.verdict is None:
                    tally["missing"] += 1
                elif judgment.verdict == "invalid":
                    tally["invalid"] += 1
                else:
                    tally["verdicts"] += 1
                if result.response is not None and not result.from_cache:
                    usage[name].input_tokens += result.response.usage.input_tokens
                    usage[name].output_tokens += result.response.usage.output_tokens
                    cost[name] += result.cost_usd or 0.0

            mode = execution or Execution()
            if mode.write_requests is not None:
                from judgebench.batch import write_batch_file

                target = mode.write_requests
                if len(clients) > 1:
                    target = target.with_name(f"{target.stem}.{_slug(name)}{target.suffix}")
                write_batch_file(client, requests, target)
            elif mode.import_file is not None:
                from judgebench.batch import import_batch_output

                import_batch_output(client, requests, mode.import_file, on_result=on_result)
            elif mode.batch:
                from judgebench.batch import run_batch

                results = await run_batch(
                    client,
                    requests,
                    judgments_path.parent,
                    on_result=on_result,
                    poll_interval=mode.poll_interval,
                    progress=progress,
                    log=mode.log,
                    resubmit_failed=mode.batch_failed == "resubmit",
                )
                retry = [i for i, r in enumerate(results) if r.response is None]
                if mode.batch_failed == "live" and retry:
                    if mode.log is not None:
                        mode.log(f"{name}: {len(retry)} failed batch line(s) run live")
                    await client.map(
                        [requests[i] for i in retry],
                        on_result=_shifted(on_result, retry),
                        progress=progress,
                    )
            else:
                await client.map(requests, on_result=on_result, progress=progress)
            if mode.reask > 0 and not completion:  # a base model answers a re-ask exactly as before
                for round_no in range(1, mode.reask + 1):
                    todo = [
                        i for i, j in sorted(latest.items()) if j.verdict == "invalid" and j.raw is not None
                    ]
                    if not todo:
                        break
                    follow = [reask_request(requests[i], latest[i]) for i in todo]
                    for i in todo:
                        rounds[i] = round_no
                    await client.map(follow, on_result=_shifted(on_result, todo))

        await asyncio.gather(*(run_one(name, calls) for name, calls in by_judge.items()))

    final = existing_judgments(judgments_path)
    outcomes: dict[str, JudgeOutcome] = {}
    for name in clients:
        mine = [c for c in plan if c.judge == name]
        failures = [
            {"key": "/".join(c.key[1:]), "error": (record.error if record else None) or "no record"}
            for c in mine
            if (record := final.get(c.key)) is None or record.verdict is None
        ]
        tally = counts[name]
        outcomes[name] = JudgeOutcome(
            planned=len(mine),
            already_done=len(mine) - len(by_judge.get(name, [])),
            requested=len(by_judge.get(name, [])),
            verdicts=tally["verdicts"],
            invalid=tally["invalid"],
            missing=len(failures),
            cache_hits=tally["cache_hits"],
            provider_calls=tally["provider_calls"],
            input_tokens=usage[name].input_tokens,
            output_tokens=usage[name].output_tokens,
            cost_usd=round(cost[name], 6),
            failures=failures,
        )
    return outcomes
