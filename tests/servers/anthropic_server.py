"""A local server speaking the Anthropic Messages wire format (POST /v1/messages).

By default it answers every request with a text message; `enqueue` scripts the next answers (one
`Reply` per request, in order) so a test can stage a fault sequence such as 429 -> 200. The reply
builders below produce the bodies and headers the real API sends for each case.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from typing import Any

from tests.servers.base import Reply, Responder, SeenRequest, WireServer

_ids = itertools.count(1)


def message_body(
    text: str | None = "Output (a)",
    *,
    model: str = "claude-test",
    stop_reason: str = "end_turn",
    input_tokens: int = 11,
    output_tokens: int = 7,
    content: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Messages API success body; `content` overrides the single text block."""
    if content is None:
        content = [] if text is None else [{"type": "text", "text": text}]
    return {
        "id": f"msg_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def ok(text: str = "Output (a)", **kwargs: Any) -> Reply:
    return Reply(200, message_body(text, **kwargs))


def rate_limited(retry_after: float | None = 2) -> Reply:
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    return Reply(
        429, error_body("rate_limit_error", "Number of request tokens has exceeded your limit."), headers
    )


def server_error(status: int = 500) -> Reply:
    return Reply(status, error_body("api_error", "Internal server error"))


def overloaded() -> Reply:
    return Reply(529, error_body("overloaded_error", "Overloaded"))


def auth_error(status: int = 401) -> Reply:
    kind = "authentication_error" if status == 401 else "permission_error"
    return Reply(status, error_body(kind, "invalid x-api-key"))


def bad_request(message: str = "messages: at least one message is required", status: int = 400) -> Reply:
    kind = "not_found_error" if status == 404 else "invalid_request_error"
    return Reply(status, error_body(kind, message))


def temperature_rejected() -> Reply:
    """What a model that no longer accepts sampling parameters answers."""
    return bad_request("`temperature` is deprecated for this model.")


def slow(delay: float, text: str = "Output (a)") -> Reply:
    """A success that arrives after `delay` seconds (a timeout when delay > the client's timeout)."""
    return Reply(200, message_body(text), delay=delay)


def truncated() -> Reply:
    return Reply(200, '{"id": "msg_1", "type": "message", "content": [{"type": "te')


def html() -> Reply:
    return Reply(200, "<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html")


def empty_content() -> Reply:
    return Reply(200, message_body(None))


def no_text_block() -> Reply:
    block = {"type": "tool_use", "id": "toolu_1", "name": "noop", "input": {}}
    return Reply(200, message_body(None, content=[block], stop_reason="tool_use"))


def refusal() -> Reply:
    return Reply(200, message_body(None, stop_reason="refusal"))


class AnthropicServer(WireServer):
    """Scriptable Messages API: queued replies first, then `default_reply` for the rest."""

    def __init__(self, responder: Responder | None = None, *, text: str = "Output (a)") -> None:
        super().__init__(responder)
        self.text = text
        # a short poll interval: stopping a server then takes ~0.05 s instead of 0.5 s
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.script: deque[Reply] = deque()

    def enqueue(self, *replies: Reply) -> AnthropicServer:
        self.script.extend(replies)
        return self

    def default_reply(self, request: SeenRequest) -> Reply:
        if request.method != "POST" or request.path.split("?")[0] != "/v1/messages":
            return Reply(404, error_body("not_found_error", f"no route {request.method} {request.path}"))
        with self.lock:
            if self.script:
                return self.script.popleft()
        model = request.body.get("model", "claude-test") if isinstance(request.body, dict) else "claude-test"
        return Reply(200, message_body(self.text, model=model))
