"""The three failure classes an adapter raises, and the helpers adapters share to build them.

`TransientError` (worth another attempt: 429, 5xx, timeouts, connection errors),
`MalformedResponseError` (a transient 200 whose body is not a usable answer) and `PermanentError`
(authentication: `KeyRejected`; validation, refusal by policy). The client retries on `retryable`, counts by
`status` and waits at least `retry_after`.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any, TypeVar


class ProviderError(Exception):
    """A call failed. `retryable` decides whether the client tries again; `status` labels the
    outcome for the client's counts (an HTTP code, "timeout", "connection", "malformed")."""

    retryable: bool = False
    status: str | None = None

    def __init__(self, message: str, *, provider: str = "", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.retry_after = retry_after

    def status_label(self) -> str:
        """The label the client counts this failure under: its tag, else its class."""
        if self.status:
            return str(self.status)
        kind = type(self)
        if kind is MalformedResponseError:
            return "malformed"
        if kind is TransientError:
            return "transient"
        return "permanent" if isinstance(self, PermanentError) else kind.__name__


class TransientError(ProviderError):
    """429, 5xx, timeout, connection error: worth another attempt (honour `retry_after`)."""

    retryable = True


class MalformedResponseError(TransientError):
    """A 200 whose body is not a usable answer (not JSON, empty choices or content)."""


class PermanentError(ProviderError):
    """Authentication, permission, validation, refusal by policy: retrying cannot help."""


class KeyRejected(PermanentError):
    """The server rejected the key (401, 403, or a provider's own "key not valid"): every later call
    would be rejected too, so the client stops sending after a few in a row (`ModelClient`)."""


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` in seconds or as an HTTP date."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


_PE = TypeVar("_PE", bound=ProviderError)


def tag_status(err: _PE, status: str) -> _PE:
    """Label a failure for the client's status counts; returns it for `raise tag_status(...)`."""
    err.status = status
    return err


def error_message(body: object, fallback: str) -> str:
    """The provider's own error text from a JSON error body ({"error": {"message": ...}}), whole:
    the caller scrubs it, then cuts it (`Provider.scrub`), never the other way round."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return fallback
