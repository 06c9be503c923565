"""Fixtures for the dataset tests: the shared LLMBar copy, an isolated cache, a local file server."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.servers.base import Reply, SeenRequest, WireServer

SHARED_LLMBAR = Path(__file__).resolve().parents[2] / ".." / "shared" / "llmbar"
BAD = Path(__file__).resolve().parent / "bad"


@pytest.fixture
def llmbar_dir() -> Path:
    """The read-only LLMBar copy beside the repository (skip when absent)."""
    if not (SHARED_LLMBAR / "Dataset").is_dir():
        pytest.skip("../shared/llmbar is not available")
    return SHARED_LLMBAR


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty cache and the default download URL."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(cache))
    monkeypatch.delenv("JUDGEBENCH_LLMBAR_URL", raising=False)
    return cache


class FileServer(WireServer):
    """Serves files under `root` by URL path (like raw.githubusercontent.com serves a commit)."""

    def __init__(self, root: Path, tamper: Callable[[str, bytes], Reply | None] | None = None) -> None:
        super().__init__()
        self.root = root
        self.tamper = tamper

    def default_reply(self, request: SeenRequest) -> Reply:
        rel = unquote(request.path.split("?", 1)[0]).lstrip("/")
        path = (self.root / rel).resolve()
        if not path.is_file() or not path.is_relative_to(self.root.resolve()):
            return Reply(status=404, body="404: Not Found", content_type="text/plain")
        data = path.read_bytes()
        if self.tamper is not None:
            reply = self.tamper(rel, data)
            if reply is not None:
                return reply
        return Reply(status=200, body=data, content_type="text/plain; charset=utf-8")


@pytest.fixture
def serve_llmbar(llmbar_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FileServer]]:
    """Start a 127.0.0.1 server over ../shared/llmbar and point JUDGEBENCH_LLMBAR_URL at it."""
    servers: list[FileServer] = []

    def start(tamper: Callable[[str, bytes], Reply | None] | None = None) -> FileServer:
        server = FileServer(llmbar_dir, tamper)
        server.start()
        servers.append(server)
        monkeypatch.setenv("JUDGEBENCH_LLMBAR_URL", server.url)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def closed_port_url() -> str:
    """A 127.0.0.1 URL where nothing listens: connections are refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
