"""HTTP hygiene for every outside connection (the provider SDKs' httpx clients and the hub client).

Two guarantees, enforced by httpx event hooks, for httpx and its vendored copy httpx2 alike:

- **A credential stays with the host it was given for.** httpx drops only `Authorization` when a
  redirect leaves the origin; `x-api-key`, `x-goog-api-key` and the rest would follow. A redirect
  to another origin (scheme, host, port) is refused outright by the provider clients
  (`cross_origin="refuse"`); the hub client (`"credential-free"`, whose file downloads go to a CDN)
  follows one only when the request carries no credential header but `Authorization`. And not
  only redirects: an SDK also follows URLs a response body names (Anthropic's batch `results_url`,
  output files, the next page), with the key headers on. Given the `home` URL the key belongs to,
  every request is checked before it is sent: one that carries a credential to another origin is
  refused (`"refuse"`) or sent with its credential headers removed (`"credential-free"`).
- **A body is bounded by its decoded size.** The limit counts the bytes after `gzip`/`deflate`
  decoding, decoded here in bounded steps (zlib's `max_length`), so 300 KB of gzip cannot become
  300 MB in memory; `allow_body` raises the limit for one download (a batch result file, a hub file).

The refusal is an exception built by the caller's `refuse(kind, message)` ("too_large", "redirect"
or "origin"), so each layer raises its own error class.
"""

from __future__ import annotations

import contextlib
import importlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "CREDENTIAL_HEADERS",
    "CrossOrigin",
    "Refuse",
    "allow_body",
    "async_hooks",
    "sync_hooks",
]

MIB = 1024 * 1024
# request headers that carry a credential, in any provider's spelling
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-goog-user-project",
        "cookie",
    }
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})

Refuse = Callable[[str, str], Exception]
CrossOrigin = Literal["refuse", "credential-free"]

_ALLOWANCE: ContextVar[int | None] = ContextVar("judgebench_body_allowance", default=None)


@contextlib.contextmanager
def allow_body(limit: int) -> Iterator[None]:
    """Within this block (this task or thread), bodies may decode to `limit` bytes instead of the
    client's own limit: a download whose size is known (a batch's results, a listed hub file)."""
    token = _ALLOWANCE.set(limit)
    try:
        yield
    finally:
        _ALLOWANCE.reset(token)


def _origin(url: Any) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


def _home_origin(home: str | None) -> tuple[str, str, int | None] | None:
    """The origin of the URL a key was given for (None: no home, no check)."""
    if not home:
        return None
    parts = urlsplit(home)
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: the SDK refuses the URL itself
        return None
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def _shown(url: Any) -> str:
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")


def _check_origin(
    request: Any, home: tuple[str, str, int | None] | None, policy: CrossOrigin, refuse: Refuse
) -> None:
    """A request that would carry a credential off the key's origin: refused, or stripped of it."""
    if home is None or _origin(request.url) == home:
        return
    carried = [k for k in request.headers if k.lower() in CREDENTIAL_HEADERS]
    if not carried:
        return
    if policy == "credential-free":
        for name in carried:
            del request.headers[name]
        return
    raise refuse(
        "origin",
        f"a response named a URL on another host ({_shown(request.url)}) than the one the key is for "
        f"({home[0]}://{home[1]}:{home[2]}): not requested, so no credential leaves the host you named",
    )


def _check_redirect(response: Any, policy: CrossOrigin, refuse: Refuse) -> None:
    """Refuse a redirect that would carry a credential to another origin (see the module's text)."""
    if response.status_code not in _REDIRECTS or "location" not in response.headers:
        return
    request = response.request
    try:
        target = request.url.join(response.headers["location"])
    except Exception:  # an unparsable location: httpx refuses it itself
        return
    if _origin(target) == _origin(request.url):
        return
    carried = sorted(h for h in (k.lower() for k in request.headers) if h in CREDENTIAL_HEADERS)
    if policy == "credential-free" and not [h for h in carried if h != "authorization"]:
        return  # httpx drops Authorization itself; nothing else to protect
    raise refuse(
        "redirect",
        f"the server at {request.url.host} redirected to another host ({_shown(target)}): not followed, so "
        "no credential leaves the host you named (set the base URL to the server that answers)",
    )


def _limit(default: int) -> int:
    allowance = _ALLOWANCE.get()
    return default if allowance is None else allowance


class _Inflater:
    """Decoding of the body's content-encodings (innermost last), each step bounded by `room`."""

    def __init__(self, encodings: list[str]) -> None:
        self._steps: list[Any] = []
        for enc in reversed(encodings):  # the last encoding applied is undone first
            if enc in ("gzip", "x-gzip"):
                self._steps.append(zlib.decompressobj(zlib.MAX_WBITS | 16))
            elif enc == "deflate":
                self._steps.append(None)  # zlib-wrapped or raw: decided on the first bytes

    def decode(self, data: bytes, room: int) -> bytes:
        """`data` decoded; at most `room + 1` bytes (more than `room` means over the limit)."""
        for i, step in enumerate(self._steps):
            if not data:
                return b""
            if step is None:
                step = self._steps[i] = self._deflater(data)
            data = step.decompress(data, room + 1)
            if len(data) > room:
                return data
        return data

    @staticmethod
    def _deflater(first: bytes) -> Any:
        wrapped = zlib.decompressobj()
        try:
            wrapped.copy().decompress(first[:64], 1)
        except zlib.error:
            return zlib.decompressobj(-zlib.MAX_WBITS)
        return wrapped


_STREAMS: dict[tuple[str, bool], type] = {}


class _BodyState:
    """What one body has produced so far, decoded, against its limit."""

    def __init__(self, limit: int, encodings: list[str], refuse: Refuse, host: str) -> None:
        self.limit = limit
        self.seen = 0
        self.inflater = _Inflater(encodings) if encodings else None
        self.refuse = refuse
        self.host = host

    def feed(self, chunk: bytes) -> bytes:
        if self.inflater is not None:
            chunk = self.inflater.decode(chunk, self.limit - self.seen)
        self.seen += len(chunk)
        if self.seen > self.limit:
            raise self.refuse("too_large", _too_large_text(self.limit, self.host))
        return chunk


def _too_large_text(limit: int, host: str, declared: int | None = None) -> str:
    size = f" (declared {declared:,} bytes)" if declared is not None else ""
    why = f"a broken or hostile server at {host}?"
    return f"response body over {limit // MIB} MiB{size}, decoded: not read ({why})"


def _stream_type(module: Any, sync: bool) -> type:
    """A body stream class for this httpx module (the SDKs may vendor their own copy of httpx)."""
    key = (module.__name__, sync)
    if key not in _STREAMS:
        if sync:

            class SyncBounded(module.SyncByteStream):  # type: ignore[misc, name-defined]
                def __init__(self, inner: Any, state: _BodyState) -> None:
                    self._inner = inner
                    self._state = state

                def __iter__(self) -> Iterator[bytes]:
                    for chunk in self._inner:
                        out = self._state.feed(chunk)
                        if out:
                            yield out

                def close(self) -> None:
                    self._inner.close()

            _STREAMS[key] = SyncBounded
        else:

            class AsyncBounded(module.AsyncByteStream):  # type: ignore[misc, name-defined]
                def __init__(self, inner: Any, state: _BodyState) -> None:
                    self._inner = inner
                    self._state = state

                async def __aiter__(self) -> AsyncIterator[bytes]:
                    async for chunk in self._inner:
                        out = self._state.feed(chunk)
                        if out:
                            yield out

                async def aclose(self) -> None:
                    await self._inner.aclose()

            _STREAMS[key] = AsyncBounded
    return _STREAMS[key]


def _bound(response: Any, limit: int, refuse: Refuse, sync: bool) -> None:
    """Wrap the body stream so that it is decoded here, counted and cut past `limit` bytes."""
    host = str(response.request.url.host)
    limit = _limit(limit)
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise refuse("too_large", _too_large_text(limit, host, int(declared)))
    encodings = [
        e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()
    ]
    if encodings:
        # decoded by us, bounded; httpx must not decode it a second time
        del response.headers["content-encoding"]
    module = importlib.import_module(type(response).__module__.split(".")[0])
    state = _BodyState(limit, [e for e in encodings if e != "identity"], refuse, host)
    response.stream = _stream_type(module, sync)(response.stream, state)


def _plain_encodings(request: Any) -> None:
    """Ask only for encodings decoded here (a server may still send others: passed through, counted)."""
    if request.headers.get("accept-encoding", "").strip().lower() != "identity":
        request.headers["accept-encoding"] = "gzip, deflate"


def async_hooks(
    limit: int, refuse: Refuse, cross_origin: CrossOrigin = "refuse", *, home: str | None = None
) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """`event_hooks` for an httpx.AsyncClient: credentials only to `home`'s origin, same-origin
    redirects and a decoded-size body limit."""
    origin = _home_origin(home)

    async def on_request(request: Any) -> None:
        _check_origin(request, origin, cross_origin, refuse)
        _plain_encodings(request)

    async def on_response(response: Any) -> None:
        try:
            _check_redirect(response, cross_origin, refuse)
            _bound(response, limit, refuse, sync=False)
        except BaseException:
            await response.aclose()
            raise

    return {"request": [on_request], "response": [on_response]}


def sync_hooks(
    limit: int, refuse: Refuse, cross_origin: CrossOrigin = "refuse", *, home: str | None = None
) -> dict[str, list[Callable[[Any], None]]]:
    """`event_hooks` for an httpx.Client (the hub's): as `async_hooks`."""
    origin = _home_origin(home)

    def on_request(request: Any) -> None:
        _check_origin(request, origin, cross_origin, refuse)
        _plain_encodings(request)

    def on_response(response: Any) -> None:
        try:
            _check_redirect(response, cross_origin, refuse)
            _bound(response, limit, refuse, sync=True)
        except BaseException:
            response.close()
            raise

    return {"request": [on_request], "response": [on_response]}
