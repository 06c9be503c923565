"""A 127.0.0.1 server that stands in for the Hugging Face hub (the part huggingface_hub uses to list
and download a dataset repository): `GET /api/datasets/REPO/tree/REV` and `HEAD|GET
/datasets/REPO/resolve/REV/PATH`, serving the files of local folders at one known commit."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.servers.base import gzip_bomb


@dataclass
class Seen:
    method: str
    path: str
    query: str


@dataclass
class HubServer:
    """Serves `repos` ({"owner/name": folder}) each at its commit in `revisions`; `tamper(path, data)`
    may alter a file as sent (the listing keeps the published sum); a file named in `bombs` is sent
    as a gzip bomb (`content-encoding: gzip`, 64 MiB once decoded), whatever the client asked for."""

    repos: dict[str, Path]
    revisions: dict[str, str]
    tamper: Callable[[str, bytes], bytes] | None = None
    bombs: set[str] = field(default_factory=set)
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str], head: bool) -> None:
                self.send_response(status)
                self.send_header("content-length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _handle(self, head: bool) -> None:
                url = urlsplit(self.path)
                hub.seen.append(Seen(self.command, unquote(url.path), url.query))
                status, body, headers = hub.answer(unquote(url.path))
                self._send(status, body, headers, head)

            def do_GET(self) -> None:
                self._handle(head=False)

            def do_HEAD(self) -> None:
                self._handle(head=True)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> HubServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _data(self, root: Path, rel: str) -> bytes:
        data = (root / rel).read_bytes()
        return self.tamper(rel, data) if self.tamper is not None else data

    def _tree(self, root: Path) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_dir():
                entries.append(
                    {"type": "directory", "oid": hashlib.sha1(rel.encode()).hexdigest(), "path": rel}
                )
                continue
            data = path.read_bytes()  # the hub lists the sum of the published file, not a tampered one
            sha = hashlib.sha256(data).hexdigest()
            entries.append(
                {
                    "type": "file",
                    "oid": hashlib.sha1(data).hexdigest(),
                    "size": len(data),
                    "path": rel,
                    "lfs": {"oid": sha, "size": len(data), "pointerSize": 134},
                }
            )
        return entries

    def answer(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        not_found = (404, b'{"error": "not found"}', {"content-type": "application/json"})
        for repo, root in self.repos.items():
            revision_of_repo = self.revisions[repo]
            tree = f"/api/datasets/{repo}/tree/"
            resolve = f"/datasets/{repo}/resolve/"
            if path == f"/api/datasets/{repo}/revision/{revision_of_repo}":
                body = json.dumps({"id": repo, "sha": revision_of_repo}).encode()
                return 200, body, {"content-type": "application/json"}
            if path.startswith(f"/api/datasets/{repo}/revision/"):
                return (404, b'{"error": "Invalid rev id"}', {"x-error-code": "RevisionNotFound"})
            if path.startswith(tree):
                if path[len(tree) :].split("/", 1)[0] != revision_of_repo:
                    return (404, b'{"error": "Invalid rev id"}', {"x-error-code": "RevisionNotFound"})
                body = json.dumps(self._tree(root)).encode()
                return 200, body, {"content-type": "application/json"}
            if path.startswith(resolve):
                revision, _, rel = path[len(resolve) :].partition("/")
                if revision != revision_of_repo:
                    return (404, b"", {"x-error-code": "RevisionNotFound"})
                if not (root / rel).is_file():
                    return (404, b"", {"x-error-code": "EntryNotFound"})
                data = self._data(root, rel)
                sha = hashlib.sha256((root / rel).read_bytes()).hexdigest()
                headers = {
                    "content-type": "application/octet-stream",
                    "etag": f'"{sha}"',
                    "x-repo-commit": revision_of_repo,
                }
                if rel in self.bombs:
                    data = gzip_bomb(b"", 64, b"")
                    headers["content-encoding"] = "gzip"
                return 200, data, headers
        return not_found
