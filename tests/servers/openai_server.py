"""A local server speaking OpenAI's `/v1/chat/completions` and `/v1/completions` wire format.

The default reply echoes a fixed text with usage and, when asked, log-probabilities, so the real
`openai` SDK can be driven against it. Tests inject faults with a responder; the helpers below build
the bodies a real server sends for each fault.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

from tests.servers.base import Reply, SeenRequest, WireServer

_ids = itertools.count()


def chat_body(
    text: str | None = "A",
    *,
    model: str = "test-model",
    finish_reason: str = "stop",
    refusal: str | None = None,
    logprobs: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 11,
    completion_tokens: int = 3,
) -> dict[str, Any]:
    """A chat.completion body as the OpenAI API returns it."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text, "refusal": refusal},
        "finish_reason": finish_reason,
        "logprobs": {"content": logprobs, "refusal": None} if logprobs is not None else None,
    }
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def completion_body(
    text: str = "A", *, model: str = "test-model", logprobs: int | None = None
) -> dict[str, Any]:
    """A text_completion body (`/v1/completions`, served by vLLM and llama.cpp)."""
    lp: dict[str, Any] | None = None
    if logprobs is not None:
        lp = {
            "tokens": [text],
            "token_logprobs": [-0.25],
            "top_logprobs": [{text: -0.25, "B": -1.6}],
            "text_offset": [0],
        }
    return {
        "id": f"cmpl-{next(_ids)}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": lp}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
    }


def error_body(
    message: str, *, type_: str = "invalid_request_error", code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def sample_logprobs(text: str = "A") -> list[dict[str, Any]]:
    return [
        {
            "token": text,
            "logprob": -0.1,
            "bytes": list(text.encode()),
            "top_logprobs": [
                {"token": text, "logprob": -0.1, "bytes": None},
                {"token": "B", "logprob": -2.4, "bytes": None},
                {"token": "Tie", "logprob": -4.0, "bytes": None},
            ],
        }
    ]


class OpenAIServer(WireServer):
    """Answers every chat request with `text` (and completions with `text` too) unless a responder
    says otherwise. `delay` applies to default replies."""

    def __init__(self, responder: Any = None, *, text: str = "A", delay: float = 0.0) -> None:
        super().__init__(responder)
        self.text = text
        self.delay = delay
        # stop() waits for serve_forever's poll: 50 ms instead of the default 500 ms per test
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def default_reply(self, request: SeenRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model", "test-model"))
        if request.path.endswith("/completions") and not request.path.endswith("/chat/completions"):
            return Reply(
                body=completion_body(self.text, model=model, logprobs=body.get("logprobs")), delay=self.delay
            )
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=error_body(f"no route {request.path}"))
        lp = sample_logprobs(self.text) if body.get("logprobs") else None
        return Reply(body=chat_body(self.text, model=model, logprobs=lp), delay=self.delay)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def chat_requests(self) -> list[SeenRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]
