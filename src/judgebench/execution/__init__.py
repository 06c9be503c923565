"""The one way planned judge calls are made: every judge at once, each under its own client limits,
live or through a Batch API (or a vLLM batch file), one record appended the moment an answer
arrives (so a kill loses nothing received), opt-in re-asks, and per-judge totals at the end.

The judge stage and bbe's re-judging of new neighbours both run through `execute_plan`, so both get
the same cache, budget, batch mode, progress and resume rules.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from judgebench.batch import import_batch_output, run_batch, write_batch_file
from judgebench.config import defaults
from judgebench.errors import ConfigError
from judgebench.judge.call_plan import PlannedCall
from judgebench.judge.provider_requests import build_request, completion_only, reask_request, to_judgment
from judgebench.judge.templates import JudgeTemplate
from judgebench.models.base import ModelRequest
from judgebench.models.client import CallResult, ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records import CallKey, Judgment, Usage
from judgebench.records.manifest import ExecutionModeName
from judgebench.records.numbers import non_negative_problem
from judgebench.records.outcomes import CallFailure, JudgeOutcome
from judgebench.store.answers_log import Answered, AnswerSink
from judgebench.store.run_folder import IndexedAppender, JudgmentIndex, last_per_key, read_jsonl

OnResult = Callable[[int, CallResult], None]


@dataclass(frozen=True)
class Execution:
    """How the calls are made: live (default), through the provider's Batch API, or imported from a
    vLLM/OpenAI batch output file; `write_requests` only writes the request file and calls nothing."""

    batch: bool = False
    poll_interval: float = defaults.POLL_INTERVAL_S
    # batch lines that failed, expired or were cancelled: a new batch ("resubmit") or live calls
    batch_failed: Literal["resubmit", "live"] = "resubmit"
    # opt-in (PROTOCOL §3): re-ask a judge whose answer had no readable verdict, up to N times,
    # each re-ask a separate recorded call; 0 keeps an invalid answer as the result
    reask: int = 0
    import_file: Path | None = None
    write_requests: Path | None = None
    log: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        problem = non_negative_problem(self.poll_interval)
        if problem is not None:
            raise ConfigError(f"--poll-interval: {problem}")

    @property
    def mode(self) -> ExecutionModeName:
        if self.write_requests is not None:
            return "write-batch-file"
        if self.import_file is not None:
            return "import-batch"
        return "batch" if self.batch else "live"


def existing_judgments(path: Path) -> dict[CallKey, Judgment]:
    """A fresh read of a judgments file (a stage holds `RunDir.judgments()` instead: read once)."""
    return last_per_key(read_jsonl(path, Judgment), key=lambda j: j.call_key())


def pending_calls(plan: Sequence[PlannedCall], done: Mapping[CallKey, Answered]) -> list[PlannedCall]:
    """Calls with no record, or whose last record is a failed call (missing): only those run again."""
    get = done.get
    return [c for c in plan if (record := get(c.key)) is None or record.verdict is None]


def _shifted(on_result: OnResult, indices: list[int]) -> OnResult:
    """Report results of a sub-list of requests under their indices in the full list."""

    def forward(k: int, result: CallResult) -> None:
        on_result(indices[k], result)

    return forward


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text)


@dataclass
class _Tally:
    """One judge's counts in this invocation (the outcome's numbers)."""

    counts: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0

    def add(self, judgment: Judgment, result: CallResult, superseded: Judgment | None) -> None:
        if superseded is not None and superseded.verdict == "invalid":
            self.counts["invalid"] -= 1  # a re-ask replaces the invalid answer it re-asks
        if result.response is not None:
            self.counts["cache_hits" if result.from_cache else "provider_calls"] += 1
        if judgment.verdict is None:
            self.counts["missing"] += 1
        elif judgment.verdict == "invalid":
            self.counts["invalid"] += 1
        else:
            self.counts["verdicts"] += 1
        if result.response is not None and not result.from_cache:
            self.usage.input_tokens += result.response.usage.input_tokens
            self.usage.output_tokens += result.response.usage.output_tokens
            self.cost += result.cost_usd or 0.0
            self.counts["unpriced"] += int(result.cost_usd is None)


class _JudgeCalls:
    """One judge's pending calls in one invocation: requests, records as they arrive, re-asks."""

    def __init__(
        self,
        calls: list[PlannedCall],
        client: ModelClient,
        template: JudgeTemplate,
        sink: IndexedAppender[Judgment],
        defaults: Mapping[str, Any] | None,
    ) -> None:
        self.calls = calls
        self.client = client
        self.template = template
        self.sink = sink
        self.completion = completion_only(client)
        self.requests: list[ModelRequest] = [build_request(c, template, client, defaults) for c in calls]
        self.latest: dict[int, Judgment] = {}
        self.reask_round: dict[int, int] = {}
        self.tally = _Tally()

    def on_result(self, index: int, result: CallResult) -> None:
        judgment = to_judgment(self.calls[index], result, self.template, self.completion)
        superseded = None
        if self.reask_round.get(index):
            judgment.reask = self.reask_round[index]
            superseded = self.latest[index]
        self.latest[index] = judgment
        self.sink.append(judgment)
        self.tally.add(judgment, result, superseded)

    async def run(self, mode: Execution, run_dir: Path, progress: ProgressReporter | None) -> None:
        if mode.write_requests is not None:
            write_batch_file(self.client, self.requests, mode.write_requests)
        elif mode.import_file is not None:
            import_batch_output(self.client, self.requests, mode.import_file, on_result=self.on_result)
        elif mode.batch:
            await self._by_batch(mode, run_dir, progress)
        else:
            await self.client.map(self.requests, on_result=self.on_result, progress=progress)
        if mode.reask > 0 and not self.completion:  # a base model answers a re-ask exactly as before
            await self._reask(mode.reask)

    async def _by_batch(self, mode: Execution, run_dir: Path, progress: ProgressReporter | None) -> None:
        results = await run_batch(
            self.client,
            self.requests,
            run_dir,
            on_result=self.on_result,
            poll_interval=mode.poll_interval,
            progress=progress,
            log=mode.log,
            resubmit_failed=mode.batch_failed == "resubmit",
        )
        retry = [i for i, r in enumerate(results) if r.response is None]
        if mode.batch_failed == "live" and retry:
            if mode.log is not None:
                mode.log(f"{self.client.name}: {len(retry)} failed batch line(s) run live")
            await self.client.map(
                [self.requests[i] for i in retry],
                on_result=_shifted(self.on_result, retry),
                progress=progress,
            )

    async def _reask(self, rounds: int) -> None:
        for round_no in range(1, rounds + 1):
            todo = [i for i, j in sorted(self.latest.items()) if j.verdict == "invalid" and j.raw is not None]
            if not todo:
                return
            follow = [reask_request(self.requests[i], self.latest[i]) for i in todo]
            for i in todo:
                self.reask_round[i] = round_no
            await self.client.map(follow, on_result=_shifted(self.on_result, todo))


def _outcome(
    plan: Sequence[PlannedCall],
    name: str,
    requested: int,
    tally: _Tally,
    final: Mapping[CallKey, Answered],
    *,
    stopped: str | None = None,
) -> JudgeOutcome:
    mine = [c for c in plan if c.judge == name]
    unsent = "not sent: the key was rejected (see above)" if stopped else "no record"
    failures = [
        CallFailure(key=c.key.call(), error=(record.error if record else None) or unsent)
        for c in mine
        if (record := final.get(c.key)) is None or record.verdict is None
    ]
    return JudgeOutcome(
        planned=len(mine),
        already_done=len(mine) - requested,
        requested=requested,
        verdicts=tally.counts["verdicts"],
        invalid=tally.counts["invalid"],
        missing=len(failures),
        cache_hits=tally.counts["cache_hits"],
        provider_calls=tally.counts["provider_calls"],
        input_tokens=tally.usage.input_tokens,
        output_tokens=tally.usage.output_tokens,
        cost_usd=round(tally.cost, 6),
        failures=failures,
        stopped=stopped,
        unsent=sum(1 for c in mine if final.get(c.key) is None) if stopped else 0,
        unpriced_calls=tally.counts["unpriced"],
    )


async def execute_plan(
    plan: Sequence[PlannedCall],
    clients: Mapping[str, ModelClient],
    template: JudgeTemplate,
    judgments: AnswerSink,
    *,
    progress: ProgressReporter | None = None,
    request_defaults: Mapping[str, Mapping[str, Any]] | None = None,
    execution: Execution | None = None,
) -> dict[str, JudgeOutcome]:
    """Run what is pending for every judge concurrently (records are appended to the file of
    `judgments`, which learns each one, so nothing is read again); return per-judge totals. With
    `execution.write_requests` and several judges, each writes its own file."""
    mode = execution or Execution()
    todo = pending_calls(plan, judgments.latest())
    by_judge: dict[str, list[PlannedCall]] = {}
    for call in todo:
        by_judge.setdefault(call.judge, []).append(call)
    runs: dict[str, _JudgeCalls] = {}
    if not todo:
        done = judgments.latest()
        return {n: _outcome(plan, n, 0, _Tally(), done, stopped=c.stopped) for n, c in clients.items()}
    with IndexedAppender(judgments) as sink:
        for name, calls in by_judge.items():
            defaults = (request_defaults or {}).get(name)
            runs[name] = _JudgeCalls(calls, clients[name], template, sink, defaults)

        async def one(name: str) -> None:
            judge_mode = mode
            if mode.write_requests is not None and len(clients) > 1:
                target = mode.write_requests
                judge_mode = replace(
                    mode, write_requests=target.with_name(f"{target.stem}.{_slug(name)}{target.suffix}")
                )
            await runs[name].run(judge_mode, judgments.path.parent, progress)

        await asyncio.gather(*(one(name) for name in runs))
    final = judgments.latest()
    return {
        name: _outcome(
            plan,
            name,
            len(by_judge.get(name, [])),
            runs[name].tally if name in runs else _Tally(),
            final,
            stopped=client.stopped,
        )
        for name, client in clients.items()
    }


def rejudge(
    calls: Sequence[PlannedCall],
    client: ModelClient,
    template: JudgeTemplate,
    sink: JudgmentIndex,
    *,
    execution: Execution,
    progress: ProgressReporter,
) -> tuple[list[Judgment], int]:
    """bbe's re-judging of new neighbours (perturbed, fresh or repeated units of one judge): what is
    still pending of `calls` is judged into `sink` (the neighbours file) by `execute_plan`, with the
    judge stage's cache, budget, batch and resume rules, counted on the stage's `progress`. Returns
    every answer the file holds for `calls` (this invocation's and earlier ones') and how many of
    them are failed calls."""

    async def go() -> None:
        try:
            await execute_plan(
                calls, {client.name: client}, template, sink, progress=progress, execution=execution
            )
        finally:
            await client.aclose()

    if calls:
        asyncio.run(go())
    latest = sink.latest()
    answers = [latest[c.key] for c in calls if c.key in latest]
    return answers, sum(1 for j in answers if j.verdict is None)
