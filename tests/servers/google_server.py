"""A local server speaking the Gemini API wire format (POST /{version}/models/{model}:generateContent).

google-genai 3.x calls `/v1/...` by default (its GOOGLE_AI_API_DEFAULT_VERSION; GOOGLE_GENAI_API_VERSION
overrides it); older releases called `/v1beta/...`: the route accepts v1, v1beta and v1alpha.

By default it answers with one text candidate, adding a `logprobsResult` when the request asks for
log-probabilities (or a 400 "not supported" when `logprobs_supported` is False, the probe path);
`enqueue` scripts the next answers, one `Reply` per request, for fault sequences.
"""

from __future__ import annotations

import math
import re
import threading
from collections import deque
from typing import Any

from tests.servers.base import Reply, Responder, SeenRequest, WireServer

ROUTE = re.compile(r"^/(?P<version>v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):generateContent$")
LOGPROBS_UNSUPPORTED = "Logprobs is not supported for the current model."


def candidate(
    text: str | None = "A",
    *,
    finish_reason: str = "STOP",
    logprobs: dict[str, Any] | None = None,
    parts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    if parts is None:
        parts = [] if text is None else [{"text": text}]
    out: dict[str, Any] = {
        "content": {"role": "model", "parts": parts},
        "finishReason": finish_reason,
        "index": 0,
    }
    if logprobs is not None:
        out["logprobsResult"] = logprobs
    return out


def response_body(
    text: str | None = "A",
    *,
    model: str = "gemini-test",
    finish_reason: str = "STOP",
    logprobs: dict[str, Any] | None = None,
    candidates: list[dict[str, Any]] | None = None,
    prompt_feedback: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    if candidates is None:
        candidates = [candidate(text, finish_reason=finish_reason, logprobs=logprobs)]
    body: dict[str, Any] = {
        "candidates": candidates,
        "usageMetadata": usage
        or {
            "promptTokenCount": 12,
            "candidatesTokenCount": 3,
            "thoughtsTokenCount": 2,
            "totalTokenCount": 17,
        },
        "modelVersion": model,
        "responseId": "resp-1",
    }
    if prompt_feedback is not None:
        body["promptFeedback"] = prompt_feedback
    return body


def logprobs_result(tokens: list[tuple[str, dict[str, float]]]) -> dict[str, Any]:
    """A logprobsResult: per position, the chosen token (first of its alternatives) and the alternatives."""
    chosen = []
    top = []
    for token, alternatives in tokens:
        chosen.append({"token": token, "tokenId": 1, "logProbability": alternatives[token]})
        top.append(
            {
                "candidates": [
                    {"token": t, "tokenId": 1, "logProbability": lp} for t, lp in alternatives.items()
                ]
            }
        )
    return {"topCandidates": top, "chosenCandidates": chosen}


# the default log-probabilities: "A" chosen with P = 0.7 over "B" 0.2 and "Tie" 0.1
DEFAULT_LOGPROBS = [("A", {"A": math.log(0.7), "B": math.log(0.2), "Tie": math.log(0.1)})]


def error_body(
    code: int, status: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        error["details"] = details
    return {"error": error}


def ok(text: str = "A", **kwargs: Any) -> Reply:
    return Reply(200, response_body(text, **kwargs))


def rate_limited(retry_after: float | None = 2, retry_delay: str | None = None) -> Reply:
    """429 RESOURCE_EXHAUSTED, with a Retry-After header and/or a RetryInfo detail (`"3s"`)."""
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    details = None
    if retry_delay is not None:
        details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}]
    body = error_body(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", details)
    return Reply(429, body, headers)


def server_error(status: int = 500) -> Reply:
    name = {500: "INTERNAL", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
    return Reply(status, error_body(status, name, "An internal error has occurred."))


def auth_error(status: int = 403) -> Reply:
    return Reply(
        status, error_body(status, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
    )


def invalid_key() -> Reply:
    """What the Gemini API actually answers for a wrong key: a 400, not a 401."""
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]
    return Reply(
        400, error_body(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", details)
    )


def bad_request(message: str = "Invalid JSON payload received.", status: int = 400) -> Reply:
    name = "NOT_FOUND" if status == 404 else "INVALID_ARGUMENT"
    return Reply(status, error_body(status, name, message))


def logprobs_unsupported() -> Reply:
    return bad_request(LOGPROBS_UNSUPPORTED)


def slow(delay: float, text: str = "A") -> Reply:
    return Reply(200, response_body(text), delay=delay)


def truncated() -> Reply:
    return Reply(200, '{"candidates": [{"content": {"parts": [{"text": "A"')


def html() -> Reply:
    return Reply(200, "<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")


def no_candidates() -> Reply:
    return Reply(200, response_body(candidates=[]))


def safety_block() -> Reply:
    return Reply(200, response_body(None, finish_reason="SAFETY"))


def prompt_blocked(reason: str = "PROHIBITED_CONTENT") -> Reply:
    return Reply(200, response_body(candidates=[], prompt_feedback={"blockReason": reason}))


class GoogleServer(WireServer):
    """Scriptable generateContent: queued replies first, then `default_reply` for the rest."""

    def __init__(self, responder: Responder | None = None, *, logprobs_supported: bool = True) -> None:
        super().__init__(responder)
        # a short poll interval: stopping a server then takes ~0.05 s instead of 0.5 s
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.script: deque[Reply] = deque()
        self.logprobs_supported = logprobs_supported

    def enqueue(self, *replies: Reply) -> GoogleServer:
        self.script.extend(replies)
        return self

    def default_reply(self, request: SeenRequest) -> Reply:
        match = ROUTE.match(request.path.split("?")[0])
        if request.method != "POST" or match is None:
            return Reply(404, error_body(404, "NOT_FOUND", f"no route {request.method} {request.path}"))
        with self.lock:
            if self.script:
                return self.script.popleft()
        body = request.body if isinstance(request.body, dict) else {}
        config = body.get("generationConfig") or {}
        if config.get("responseLogprobs"):
            if not self.logprobs_supported:
                return logprobs_unsupported()
            return ok("A", model=match["model"], logprobs=logprobs_result(DEFAULT_LOGPROBS))
        return ok("A", model=match["model"])
