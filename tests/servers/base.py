"""A scriptable HTTP server on 127.0.0.1 for provider wire-format tests.

Each provider's test server subclasses `WireServer` and turns a request body into a response body
in that provider's format. Faults are injected per call by a `responder` that returns a `Reply`:
status, JSON or raw body, headers and an optional delay (a delay longer than the client's timeout is
a timeout). Hostile modes for the hardening tests: `drip` (one byte at a time), `redirect_to` (a 307
to another origin, e.g. a second server on 127.0.0.2 that records what reaches it), `gzip_bomb` (a few
hundred KB of gzip that decode to many MB), `reject_key` (401 to everything), and bodies built by the
tests (lone surrogates, huge answers, rich markup in error texts, credentials echoed back).
The server counts every request and every successful (2xx) answer, so tests can prove
that a resumed run repeats no paid call.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; str/bytes -> sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json"
    # hostile: send the body one byte every `drip` seconds (each read succeeds, the whole never ends)
    drip: float = 0.0


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[SeenRequest], Reply | None]


def redirect_to(url: str, status: int = 307) -> Reply:
    """A redirect to `url` (a 307 keeps the method, the body and, in a careless client, the key)."""
    return Reply(status=status, body=b"", headers={"location": url})


def gzip_bytes(payload: bytes) -> bytes:
    out = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return out.compress(payload) + out.flush()


_BOMBS: dict[tuple[bytes, int, bytes], bytes] = {}


def gzip_bomb(head: bytes, filler_mib: int, tail: bytes) -> bytes:
    """gzip of `head` + `filler_mib` MiB of "A" + `tail`: about 1 KB per decoded MiB (built once)."""
    key = (head, filler_mib, tail)
    if key not in _BOMBS:
        out = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
        parts = [out.compress(head)]
        block = b"A" * (1024 * 1024)
        parts.extend(out.compress(block) for _ in range(filler_mib))
        parts.append(out.compress(tail) + out.flush())
        _BOMBS[key] = b"".join(parts)
    return _BOMBS[key]


def gzipped(body: bytes, status: int = 200) -> Reply:
    """`body` (already gzip-encoded) sent with `content-encoding: gzip`."""
    return Reply(status=status, body=body, headers={"content-encoding": "gzip"})


def reject_key(_request: SeenRequest) -> Reply:
    """A server that rejects the key of every request (the provider's own error shape is not needed:
    the SDKs classify a 401 by its status)."""
    return Reply(status=401, body={"error": {"message": "Invalid API key", "type": "invalid_request_error"}})


class WireServer:
    """Base server. Subclasses implement `default_reply` in their provider's wire format."""

    def __init__(self, responder: Responder | None = None, *, host: str = "127.0.0.1") -> None:
        if not host.startswith("127."):
            raise ValueError("test servers listen on loopback addresses only")
        self.host = host
        self.responder = responder
        self.requests: list[SeenRequest] = []
        self.successes = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                seen = SeenRequest(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with server.lock:
                    server.requests.append(seen)
                reply = server.responder(seen) if server.responder else None
                if reply is None:
                    reply = server.default_reply(seen)
                if reply.delay:
                    time.sleep(reply.delay)
                if isinstance(reply.body, bytes):
                    payload = reply.body
                elif isinstance(reply.body, str):
                    payload = reply.body.encode("utf-8")
                else:
                    payload = json.dumps(reply.body).encode("utf-8")
                if 200 <= reply.status < 300:
                    # counted before the bytes leave: a client that has its answer always sees it counted
                    with server.lock:
                        server.successes += 1
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    chunked = reply.headers.get("transfer-encoding") == "chunked"
                    if not chunked:
                        self.send_header("content-length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    if chunked:  # hostile: no declared size, the body in 64 KiB chunks
                        for i in range(0, len(payload), 65536):
                            piece = payload[i : i + 65536]
                            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.write(b"0\r\n\r\n")
                    elif reply.drip:
                        for i in range(len(payload)):
                            self.wfile.write(payload[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.drip)
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return

            do_POST = _handle
            do_GET = _handle
            do_DELETE = _handle

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def default_reply(self, request: SeenRequest) -> Reply:
        raise NotImplementedError

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class CatchServer(WireServer):
    """A server that answers 200 `{}` to anything and records what reached it (the other host a
    hostile redirect points at)."""

    def default_reply(self, request: SeenRequest) -> Reply:
        return Reply(body={})
