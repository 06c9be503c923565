"""A local server emulating OpenAI's Batch API (files + batches) and answering live chat calls the same way.

Answers are a deterministic function of the request (`judge_answer`), so a batch run and a live run
against this server must produce the same texts. A batch moves validating -> in_progress ->
finalizing -> completed, one stage per `polls_per_stage` retrieves (held at in_progress while `hold`
is set); `line_fault(custom_id, attempt)` scripts per-line outcomes: None (answer), "server_error"
(a 500 line), "invalid" (a 400 line), "expired" (the batch expires with that line unfinished),
"cancelled", or "lost" (no line at all). `attempt` counts how many batches carried that custom_id.
`completion_tokens` sets the reported usage (large values make budget tests bite).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.servers.base import Reply, SeenRequest, WireServer
from tests.servers.openai_server import chat_body, error_body

LineFault = Callable[[str, int], str | None]
_STAGES = ("validating", "in_progress", "finalizing", "completed")


def judge_answer(payload: Any) -> str:
    """A strict-JSON verdict chosen by hashing the prompt: same prompt, same answer, anywhere."""
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).digest()
    winner = ("A", "B", "Tie")[digest[0] % 3]
    return json.dumps(
        {"winner": winner, "confidence": round(0.5 + digest[1] / 512, 3), "reason": "r" + digest.hex()[:8]}
    )


def prompt_tokens(payload: Any) -> int:
    return len(json.dumps(payload, ensure_ascii=False)) // 4 + 1


class OpenAIBatchServer(WireServer):
    def __init__(
        self,
        *,
        line_fault: LineFault | None = None,
        polls_per_stage: int = 1,
        no_batch_api: bool = False,
        completion_tokens: int = 3,
    ) -> None:
        super().__init__(None)
        # headers and body leave in two writes: without this, Nagle + delayed ACK add ~40 ms a request
        self.httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        # a short poll interval: stopping the server takes ~0.05 s instead of 0.5 s
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.line_fault = line_fault
        self.polls_per_stage = max(1, polls_per_stage)
        self.no_batch_api = no_batch_api
        self.completion_tokens = completion_tokens
        self.hold = threading.Event()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls: Counter[str] = Counter()
        self.seen_ids: Counter[str] = Counter()
        self._ids = itertools.count(1)

    # --- helpers for tests ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def __enter__(self) -> OpenAIBatchServer:
        self.start()
        return self

    def created(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.batches.values())

    def live_calls(self) -> int:
        return sum(1 for r in self.requests if r.path.endswith("/chat/completions"))

    # --- routes -----------------------------------------------------------------------------------

    def default_reply(self, request: SeenRequest) -> Reply:
        parts = urlsplit(request.path)
        path = parts.path.removeprefix("/v1")
        if path == "/chat/completions" and request.method == "POST":
            body = request.body if isinstance(request.body, dict) else {}
            return Reply(body=self._chat(body))
        if self.no_batch_api:
            return Reply(404, error_body(f"Unknown request URL: {request.method} {parts.path}"))
        if path == "/files" and request.method == "POST":
            return self._upload(request)
        if path.startswith("/files/") and path.endswith("/content"):
            file_id = path.split("/")[2]
            with self.lock:
                data = self.files.get(file_id)
            if data is None:
                return Reply(404, error_body(f"No such File object: {file_id}"))
            return Reply(body=data, content_type="application/octet-stream")
        if path == "/batches" and request.method == "POST":
            return self._create(request.body if isinstance(request.body, dict) else {})
        if path == "/batches" and request.method == "GET":
            return self._list(parse_qs(parts.query))
        if path.startswith("/batches/") and request.method == "GET":
            return self._retrieve(path.split("/")[2])
        return Reply(404, error_body(f"no route {request.method} {parts.path}"))

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        return chat_body(
            judge_answer(messages),
            model=str(body.get("model", "test-model")),
            prompt_tokens=prompt_tokens(messages),
            completion_tokens=self.completion_tokens,
        )

    def _upload(self, request: SeenRequest) -> Reply:
        raw = request.body.encode("utf-8") if isinstance(request.body, str) else b""
        ctype = request.headers.get("content-type", "")
        msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
        data: bytes | None = None
        purpose = None
        for part in msg.iter_parts():  # type: ignore[attr-defined,unused-ignore]
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                payload = part.get_payload(decode=True)
                data = payload if isinstance(payload, bytes) else None
            elif name == "purpose":
                purpose = part.get_content().strip()
        if data is None or purpose != "batch":
            return Reply(400, error_body("expected a multipart upload with file and purpose=batch"))
        with self.lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = data
        return Reply(
            body={
                "id": file_id,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": "input.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        )

    def _create(self, body: dict[str, Any]) -> Reply:
        file_id = str(body.get("input_file_id"))
        with self.lock:
            data = self.files.get(file_id)
            if data is None:
                return Reply(404, error_body(f"No such File object: {file_id}"))
            lines = [json.loads(line) for line in data.splitlines() if line.strip()]
            batch_id = f"batch_{next(self._ids):04d}"
            batch = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint"),
                "errors": None,
                "input_file_id": file_id,
                "completion_window": body.get("completion_window"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": int(time.time()),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "metadata": body.get("metadata"),
            }
            self.batches[batch_id] = batch
            for line in lines:
                self.seen_ids[line["custom_id"]] += 1
            batch["_lines"] = [(line, self.seen_ids[line["custom_id"]]) for line in lines]
        return Reply(body=self._public(batch))

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _list(self, query: dict[str, list[str]]) -> Reply:
        with self.lock:
            data = [self._public(b) for b in reversed(list(self.batches.values()))]
        return Reply(
            body={
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": False,
            }
        )

    def _retrieve(self, batch_id: str) -> Reply:
        with self.lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return Reply(404, error_body(f"No batch {batch_id}"))
            if batch["status"] in _STAGES[:-1]:
                self.polls[batch_id] += 1
                stage = min(self.polls[batch_id] // self.polls_per_stage, len(_STAGES) - 1)
                if self.hold.is_set():
                    stage = min(stage, 1)
                if stage == len(_STAGES) - 1:
                    self._finish(batch)
                else:
                    batch["status"] = _STAGES[stage]
            return Reply(body=self._public(batch))

    def _finish(self, batch: dict[str, Any]) -> None:
        out: list[str] = []
        err: list[str] = []
        expired = False
        for line, attempt in batch["_lines"]:
            cid = line["custom_id"]
            fault = self.line_fault(cid, attempt) if self.line_fault else None
            rid = f"batch_req_{next(self._ids)}"
            if fault is None:
                body = self._chat(line["body"])
                out.append(
                    json.dumps(
                        {
                            "id": rid,
                            "custom_id": cid,
                            "response": {"status_code": 200, "request_id": rid, "body": body},
                            "error": None,
                        }
                    )
                )
            elif fault in ("server_error", "invalid"):
                status = 500 if fault == "server_error" else 400
                body = error_body("The server had an error" if status == 500 else "Invalid 'messages'")
                err.append(
                    json.dumps(
                        {
                            "id": rid,
                            "custom_id": cid,
                            "response": {"status_code": status, "request_id": rid, "body": body},
                            "error": None,
                        }
                    )
                )
            elif fault in ("expired", "cancelled"):
                expired = expired or fault == "expired"
                code = "batch_expired" if fault == "expired" else "batch_cancelled"
                err.append(
                    json.dumps(
                        {
                            "id": rid,
                            "custom_id": cid,
                            "response": None,
                            "error": {"code": code, "message": f"request {fault}"},
                        }
                    )
                )
            # "lost": no line at all
        for lines, key in ((out, "output_file_id"), (err, "error_file_id")):
            if lines:
                file_id = f"file-{next(self._ids)}"
                self.files[file_id] = ("\n".join(lines) + "\n").encode("utf-8")
                batch[key] = file_id
        batch["status"] = "expired" if expired else "completed"
        batch["request_counts"] = {"total": len(batch["_lines"]), "completed": len(out), "failed": len(err)}
