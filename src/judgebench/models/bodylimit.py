"""The provider SDKs' httpx clients (openai, anthropic, google-genai), bounded and same-origin.

An SDK reads a whole response body into memory before handing it over: a hostile or broken server
that answers a 900-token request with 100 MB (or 300 KB of gzip that decodes to 300 MB) made one call
hold hundreds of MB. And an SDK follows redirects: httpx drops `Authorization` across hosts, but
`x-api-key` and `x-goog-api-key` went with a 307 to any host. The SDK's own httpx client is built here
with `judgebench.wire`'s hooks: the decoded body is bounded (`BodyTooLarge`), a redirect to another
origin is refused (`RedirectRefused`), and so is any request that would carry the key to another
origin than the base URL's (`OriginRefused`: a batch `results_url` on another host); all are permanent
failures (asking again gets the same).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from judgebench.models.failures import PermanentError, tag_status
from judgebench.wire import Refuse, allow_body, async_hooks

__all__ = [
    "BodyTooLarge",
    "OriginRefused",
    "RedirectRefused",
    "WireRefusal",
    "batch_results_bound",
    "body_limit",
    "bounded_http_client",
    "client_hooks",
    "refusal",
]

MIB = 1024 * 1024


class WireRefusal(PermanentError):
    """The HTTP layer refused a response before the SDK saw it: the call fails at once."""


class BodyTooLarge(WireRefusal):
    """The response body passed the limit (decoded): not read further."""


class RedirectRefused(WireRefusal):
    """The server redirected to another origin: not followed, so the key never leaves its host."""


class OriginRefused(WireRefusal):
    """A request with the key was about to go to another origin than the key's (a URL a response
    named: a batch's results_url, a file, a page): not sent."""


def body_limit(max_answer_chars: int) -> int:
    """Bytes of body read at most: room for the capped answer in UTF-8 with its log-probabilities,
    never under 8 MiB."""
    return max(8 * MIB, 64 * max_answer_chars)


@contextlib.contextmanager
def batch_results_bound(max_answer_chars: int, lines: int) -> Iterator[None]:
    """Within this block, a body (a batch's result file or its inlined answers) may decode to room
    for `lines` answers: 64 KiB plus 16 bytes per allowed character each, never under 8 MiB."""
    with allow_body(max(body_limit(max_answer_chars), lines * (64 * 1024 + 16 * max_answer_chars))):
        yield


def refusal(provider: str) -> Refuse:
    """The wire hooks' refusals as this provider's permanent failures."""

    def refuse(kind: str, message: str) -> Exception:
        if kind == "redirect":
            return tag_status(RedirectRefused(f"{provider}: {message}", provider=provider), "redirect")
        if kind == "origin":
            return tag_status(OriginRefused(f"{provider}: {message}", provider=provider), "origin")
        return tag_status(BodyTooLarge(f"{provider}: {message}", provider=provider), "too_large")

    return refuse


def client_hooks(
    limit: int, provider: str, home: str | None
) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """The `event_hooks` every provider's async httpx client gets; `home`: the base URL its key is
    for (no request carries the key to another origin)."""
    return async_hooks(limit, refusal(provider), home=home)


def bounded_http_client(sdk: Any, limit: int, provider: str, home: str | None) -> Any:
    """The SDK's default async httpx client (its timeouts, pool limits) with every response body
    bounded by `limit` decoded bytes, no redirect to another origin, and no request with the key
    to another origin than `home`'s."""
    return sdk.DefaultAsyncHttpxClient(event_hooks=client_hooks(limit, provider, home))
