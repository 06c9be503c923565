"""From a planned call to the judge's prompt, and from the judge's answer to a recorded judgment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgebench.judge.call_plan import PlannedCall
from judgebench.judge.parse import parse_verdict, verdict_probabilities
from judgebench.judge.templates import JudgeTemplate
from judgebench.models.base import Message, ModelRequest
from judgebench.models.client import CallResult, ModelClient
from judgebench.records import Judgment
from judgebench.records.clock import now_iso
from judgebench.records.sanitize import clip

# A judgment keeps the judge's reason up to this many characters (the whole answer is in `raw`).
REASON_LIMIT = 2000


def completion_only(client: ModelClient) -> bool:
    """A base model (completion, no chat) gets the template's completion form and no re-asks."""
    return client.traits.completion_only


def build_request(
    call: PlannedCall, template: JudgeTemplate, client: ModelClient, defaults: Mapping[str, Any] | None = None
) -> ModelRequest:
    """The judge prompt for one call; a base model (completion only) gets the completion form. A
    call that carries its own template (the template probe) is rendered with that one."""
    completion = completion_only(client)
    template = call.template or template
    request = template.render(
        instruction=call.instruction,
        output_a=call.output_a,
        output_b=call.output_b,
        language=call.language,
        completion=completion,
        want_logprobs=client.capabilities.logprobs,
        temperature=(defaults or {}).get("temperature", 0.0),
        max_tokens=None if completion else (defaults or {}).get("max_tokens"),
    )
    request.context = {**call.context(), "template": template.name}
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
    """The record of one call: the answer parsed into a verdict, or the reason there is none."""
    template = call.template or template
    base: dict[str, Any] = {
        "judge": call.judge,
        "item_id": call.item_id,
        "subset": call.subset,
        "kind": call.kind,
        "condition": call.recorded_condition,  # a repeat: `repeat-i`
        "order": call.order,
        "label": call.label,
        "cache_key": result.cache_key,
        "prompt_hash": result.prompt_hash,
        "batch_id": result.batch_id,
        "custom_id": result.custom_id,
        "template": template.name,
        "params": result.params_sent,
        "created_at": now_iso(),
        "perturbation": call.perturbation,
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
        # the judge's "one or two sentences"; a runaway reason is cut, not stored a second time whole
        reason=clip(parsed.reason, REASON_LIMIT) if parsed.reason is not None else None,
        prob_a=probs[0] if probs else None,
        prob_b=probs[1] if probs else None,
        prob_tie=probs[2] if probs else None,
        model=response.model,
        usage=response.usage,
        cost_usd=result.cost_usd,
        latency_s=response.latency_s,
        finish_reason=response.finish_reason,
        from_cache=result.from_cache,
        raw_chars=response.text_chars,
        raw_cap=response.text_cap,
    )
