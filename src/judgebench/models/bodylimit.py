"""A bounded HTTP body read for the SDKs that speak httpx (openai, anthropic, google-genai).

An SDK reads a whole response body into memory before handing it over: a hostile or broken server
that answers a 900-token request with 100 MB made one call hold 886 MB. The SDK's own httpx client
is built here with a response hook that refuses a declared `content-length` over the limit and
wraps the body stream so that reading stops (`BodyTooLarge`, a permanent failure: asking again
would get the same body) as soon as more than the limit has arrived, chunked or not.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from judgebench.models.failures import PermanentError, tag_status

__all__ = ["BodyTooLarge", "body_limit", "bounded_http_client", "response_hook"]

MIB = 1024 * 1024


class BodyTooLarge(PermanentError):
    """The response body passed the limit: not read further, the call fails at once."""


def body_limit(max_answer_chars: int) -> int:
    """Bytes of body read at most: room for the capped answer in UTF-8 with its log-probabilities,
    never under 8 MiB."""
    return max(8 * MIB, 64 * max_answer_chars)


def _too_large(provider: str, limit: int, declared: int | None = None) -> BodyTooLarge:
    size = f" (declared {declared:,} bytes)" if declared is not None else ""
    err = BodyTooLarge(
        f"{provider}: response body over {limit // MIB} MiB{size}: not read (a broken or hostile server?)",
        provider=provider,
    )
    return tag_status(err, "too_large")


_STREAM_TYPES: dict[str, type] = {}


def _bounded_stream_type(httpx_module: Any) -> type:
    """A body stream class for this httpx module (the SDKs may vendor their own copy of httpx)."""
    name = httpx_module.__name__
    if name not in _STREAM_TYPES:
        base: type = httpx_module.AsyncByteStream

        class Bounded(base):  # type: ignore[misc, valid-type]
            def __init__(self, inner: Any, limit: int, provider: str) -> None:
                self._inner = inner
                self._limit = limit
                self._provider = provider

            async def __aiter__(self) -> AsyncIterator[bytes]:
                seen = 0
                async for chunk in self._inner:
                    seen += len(chunk)
                    if seen > self._limit:
                        raise _too_large(self._provider, self._limit)
                    yield chunk

            async def aclose(self) -> None:
                await self._inner.aclose()

        _STREAM_TYPES[name] = Bounded
    return _STREAM_TYPES[name]


def response_hook(limit: int, provider: str) -> Callable[[Any], Awaitable[None]]:
    """An httpx response hook (run once the headers are in, before the body is read) that bounds the
    body by `limit` bytes."""

    async def bound(response: Any) -> None:
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise _too_large(provider, limit, int(declared))
        module = importlib.import_module(type(response).__module__.split(".")[0])
        response.stream = _bounded_stream_type(module)(response.stream, limit, provider)

    return bound


def bounded_http_client(sdk: Any, limit: int, provider: str) -> Any:
    """The SDK's default async httpx client (its timeouts, pool limits, redirects) with every response
    body bounded by `limit` bytes."""
    return sdk.DefaultAsyncHttpxClient(event_hooks={"response": [response_hook(limit, provider)]})
