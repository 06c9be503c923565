"""A provider added the way any new one is: this adapter module, one `register(...)` line (the
`toy` fixture in tests/models/conftest.py) and a price entry. It runs in process and answers
every judge prompt with a verdict drawn from the prompt's text, so its answers are repeatable."""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from judgebench.models.base import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderTraits,
)
from judgebench.records import Usage


class ToyProvider(Provider):
    """`toy:MODEL`: in process, chat, JSON answers; counts the requests it was really sent."""

    name: ClassVar[str] = "toy"
    traits: ClassVar[ProviderTraits] = ProviderTraits(in_process=True)
    sent: ClassVar[list[str]] = []  # prompt texts of every generate, across instances

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(json_mode=True)

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        return {"model": self.model, "max_tokens": request.max_tokens}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        prompt = request.prompt or "\n".join(m.content for m in request.messages or [])
        ToyProvider.sent.append(prompt)
        winner = "A" if hashlib.sha256(prompt.encode()).digest()[0] % 2 else "B"
        text = json.dumps({"winner": winner, "confidence": 0.5, "reason": "toy"})
        return ModelResponse(
            text=text,
            finish_reason="stop",
            usage=Usage(input_tokens=len(prompt) // 4 + 1, output_tokens=7),
            model=f"toy:{self.model}",
            params_sent=self.build_params(request),
        )
