"""What a provider Batch API must offer the runner: encode, submit, find again, poll, fetch results.

Each backend speaks one API through its official SDK and reuses the live adapter for everything
that is the same as a live call (parameters sent, parsing an answer body, error classes), so an
answer that arrives by batch is the same `ModelResponse` a live call would have produced.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import importlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from judgebench.errors import JudgebenchError, ProviderConfigError
from judgebench.models.base import ModelRequest, ModelResponse, TransientError
from judgebench.models.client import ModelClient
from judgebench.models.provider_registry import ModelSpec, traits_of

if TYPE_CHECKING:
    from judgebench.batch.state import Submission

# How to run the same calls without a provider Batch API (printed where --batch cannot be used).
VLLM_HINT = (
    "for a local vLLM server write the OpenAI batch request file (judgebench.batch.write_batch_file), "
    "run `vllm run-batch -i requests.jsonl -o results.jsonl --model MODEL`, and import the answers "
    "with `judgebench judge --import-batch results.jsonl`"
)


class BatchError(JudgebenchError):
    """A batch could not be created, polled or downloaded (after the SDK's own retries)."""


@dataclass
class BatchStatus:
    """A batch's state as the provider reports it; `ended` once no line will change any more."""

    status: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class LineOutcome:
    """One result line: an answer, or why there is none and whether another batch could help."""

    custom_id: str
    response: ModelResponse | None = None
    error: str | None = None
    retryable: bool = False


class BatchBackend(abc.ABC):
    """One provider's Batch API for one client (model and endpoint)."""

    name: ClassVar[str] = ""
    max_requests: ClassVar[int] = 50_000
    max_bytes: ClassVar[int] = 200 * 1024 * 1024

    def __init__(self, client: ModelClient) -> None:
        self.client = client

    @property
    def deadline_s(self) -> float:
        """How long one poll, listing or download may take in all: `--timeout` for each of the
        1 + `--max-retries` attempts the SDK makes. The SDK's own timeout bounds each read, not the
        whole, so a server answering one byte at a time would otherwise hold a poll for ever."""
        settings = self.client.settings
        return settings.timeout * (1 + max(0, settings.max_retries))

    @contextlib.asynccontextmanager
    async def deadline(self, doing: str) -> AsyncIterator[None]:
        """The block (one poll, listing or download, retries included) within `deadline_s`; past it,
        a TransientError that names the deadline (the backends turn it into a BatchError)."""
        settings = self.client.settings
        try:
            async with asyncio.timeout(self.deadline_s):
                yield
        except TimeoutError:
            attempts = 1 + max(0, settings.max_retries)
            name = self.client.provider.name
            raise TransientError(
                f"{name}: no answer within {self.deadline_s:g}s while {doing} "
                f"(--timeout {settings.timeout:g}s x {attempts} attempt{'s' if attempts != 1 else ''})",
                provider=name,
            ) from None

    @abc.abstractmethod
    def encode(self, custom_id: str, request: ModelRequest) -> tuple[str, dict[str, Any]]:
        """(endpoint, the request line) for one call; lines of one batch share an endpoint."""

    @abc.abstractmethod
    def params_sent(self, request: ModelRequest) -> dict[str, Any]:
        """What a live call would record as sent for `request` (the answer's `params_sent`)."""

    @abc.abstractmethod
    async def submit(self, sub: Submission, lines: list[dict[str, Any]], run_id: str) -> str:
        """Create the batch; returns its id."""

    async def recover(self, sub: Submission, run_id: str) -> str | None:
        """The id of a batch created for `sub` whose id was never saved (a kill right after create)."""
        return None

    @abc.abstractmethod
    async def status(self, batch_id: str) -> BatchStatus: ...

    @abc.abstractmethod
    async def results(self, sub: Submission) -> list[LineOutcome]:
        """Every line the provider has for an ended batch (lines it lost are simply absent)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release what the backend opened beyond the client's provider."""


def refusal(target: ModelClient | ModelSpec | str) -> str | None:
    """Why a client's (or a spec's) provider cannot run through a Batch API, or None when it can.

    Decided by the provider's declared traits: its `batch_backend`, else its `batch_refusal`."""
    if isinstance(target, ModelClient):
        provider, traits = target.spec.provider, target.traits
    else:
        spec = ModelSpec.parse(target) if isinstance(target, str) else target
        provider, traits = spec.provider, traits_of(spec)
    if traits.batch_backend is not None:
        return None
    if traits.batch_refusal is not None:
        return f"{provider}: {traits.batch_refusal}"
    if traits.in_process:
        return (
            f"{provider}: --batch sends calls through a provider's Batch API and '{provider}' runs in this "
            f"process; run without --batch, or {VLLM_HINT}"
        )
    return f"{provider}: no Batch API support for this provider; run without --batch"


def backend_for(client: ModelClient) -> BatchBackend:
    """The Batch API backend for `client`, or ProviderConfigError saying why there is none.

    The backend class is the one the provider names (`traits.batch_backend`, "module:Class"),
    imported here on first use like the provider adapters themselves."""
    why = refusal(client)
    target = client.traits.batch_backend
    if why is not None or target is None:
        raise ProviderConfigError(why or f"{client.spec.provider}: no Batch API backend")
    module_name, _, cls_name = target.partition(":")
    backend: type[BatchBackend] = getattr(importlib.import_module(module_name), cls_name)
    return backend(client)
