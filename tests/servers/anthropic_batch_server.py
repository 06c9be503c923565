"""A local server emulating Anthropic's Message Batches API and answering live Messages calls the same way.

A batch is `in_progress` for `polls_per_stage` retrieves (or while `hold` is set), then `ended` with
a `results_url` on this server. `line_fault(custom_id, attempt)` scripts per-request results: None
(succeeded, a deterministic answer), "errored" (api_error, retryable), "invalid" (invalid_request_error),
"expired", "canceled", "lost" (no result line), or "no_temperature" (a 400 naming temperature when
the request sends one, as models that take no sampling parameters answer).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from tests.servers.anthropic_server import error_body, message_body
from tests.servers.base import Reply, SeenRequest, WireServer
from tests.servers.openai_batch_server import LineFault, judge_answer, prompt_tokens


def _iso(dt: datetime) -> str:
    return dt.isoformat().replace("+00:00", "Z")


def _payload(params: dict[str, Any]) -> dict[str, Any]:
    return {"system": params.get("system"), "messages": params.get("messages")}


class AnthropicBatchServer(WireServer):
    def __init__(self, *, line_fault: LineFault | None = None, polls_per_stage: int = 2) -> None:
        super().__init__(None)
        # headers and body leave in two writes: without this, Nagle + delayed ACK add ~40 ms a request
        self.httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        # a short poll interval: stopping the server takes ~0.05 s instead of 0.5 s
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.line_fault = line_fault
        self.polls_per_stage = max(1, polls_per_stage)
        self.hold = threading.Event()
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls: Counter[str] = Counter()
        self.seen_ids: Counter[str] = Counter()
        self._ids = itertools.count(1)

    def __enter__(self) -> AnthropicBatchServer:
        self.start()
        return self

    def created(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.batches.values())

    def live_calls(self) -> int:
        return sum(1 for r in self.requests if r.path == "/v1/messages")

    def _message(self, params: dict[str, Any]) -> dict[str, Any]:
        payload = _payload(params)
        return message_body(
            judge_answer(payload),
            model=str(params.get("model", "claude-test")),
            input_tokens=prompt_tokens(payload),
        )

    def default_reply(self, request: SeenRequest) -> Reply:
        path = urlsplit(request.path).path
        body = request.body if isinstance(request.body, dict) else {}
        if path == "/v1/messages" and request.method == "POST":
            return Reply(body=self._message(body))
        if path == "/v1/messages/batches" and request.method == "POST":
            return self._create(body)
        if path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            return self._results(path.split("/")[4])
        if path.startswith("/v1/messages/batches/") and request.method == "GET":
            return self._retrieve(path.split("/")[4])
        return Reply(404, error_body("not_found_error", f"no route {request.method} {path}"))

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def _create(self, body: dict[str, Any]) -> Reply:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return Reply(400, error_body("invalid_request_error", "requests: expected a non-empty list"))
        now = datetime.now(UTC)
        with self.lock:
            batch_id = f"msgbatch_{next(self._ids):04d}"
            for r in requests:
                self.seen_ids[r["custom_id"]] += 1
            batch = {
                "id": batch_id,
                "type": "message_batch",
                "processing_status": "in_progress",
                "request_counts": {
                    "processing": len(requests),
                    "succeeded": 0,
                    "errored": 0,
                    "canceled": 0,
                    "expired": 0,
                },
                "ended_at": None,
                "created_at": _iso(now),
                "expires_at": _iso(now + timedelta(hours=24)),
                "archived_at": None,
                "cancel_initiated_at": None,
                "results_url": None,
                "_requests": [(r, self.seen_ids[r["custom_id"]]) for r in requests],
            }
            self.batches[batch_id] = batch
        return Reply(body=self._public(batch))

    def _retrieve(self, batch_id: str) -> Reply:
        with self.lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return Reply(404, error_body("not_found_error", f"no batch {batch_id}"))
            if batch["processing_status"] == "in_progress":
                self.polls[batch_id] += 1
                if self.polls[batch_id] >= self.polls_per_stage and not self.hold.is_set():
                    self._finish(batch)
            return Reply(body=self._public(batch))

    def _finish(self, batch: dict[str, Any]) -> None:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        lines: list[str] = []
        for request, attempt in batch["_requests"]:
            cid = request["custom_id"]
            fault = self.line_fault(cid, attempt) if self.line_fault else None
            result: dict[str, Any]
            if fault is None:
                result = {"type": "succeeded", "message": self._message(request["params"])}
                counts["succeeded"] += 1
            elif fault in ("errored", "invalid"):
                kind = "api_error" if fault == "errored" else "invalid_request_error"
                result = {"type": "errored", "error": error_body(kind, f"{kind} for this request")}
                counts["errored"] += 1
            elif fault == "no_temperature" and "temperature" in request["params"]:
                message = "temperature: this model does not support sampling parameters"
                result = {"type": "errored", "error": error_body("invalid_request_error", message)}
                counts["errored"] += 1
            elif fault == "no_temperature":
                result = {"type": "succeeded", "message": self._message(request["params"])}
                counts["succeeded"] += 1
            elif fault in ("expired", "canceled"):
                result = {"type": fault}
                counts[fault] += 1
            else:  # "lost"
                continue
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        batch["_results"] = ("\n".join(lines) + "\n").encode("utf-8")
        batch["processing_status"] = "ended"
        batch["request_counts"] = counts
        batch["ended_at"] = _iso(datetime.now(UTC))
        batch["results_url"] = f"{self.url}/v1/messages/batches/{batch['id']}/results"

    def _results(self, batch_id: str) -> Reply:
        with self.lock:
            batch = self.batches.get(batch_id)
            if batch is None or "_results" not in batch:
                return Reply(404, error_body("not_found_error", f"no results for {batch_id}"))
            data = batch["_results"]
        return Reply(body=data, content_type="application/binary")
