"""A local server emulating Gemini batch mode (inline requests), answering live generateContent the same way.

`POST /{v}/models/{m}:batchGenerateContent` creates a job (state BATCH_STATE_PENDING); each
`GET /{v}/batches/{id}` moves it on (RUNNING, then SUCCEEDED after `polls_per_stage` polls, held at
RUNNING while `hold` is set), when its inline responses appear in `metadata.output`. `GET /{v}/batches`
lists jobs. `line_fault(key, attempt)` scripts per-request results: None (answer), "error" (code 13,
retryable), "invalid" (code 3), or "lost" (no response line).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
from collections import Counter
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from tests.servers.base import Reply, SeenRequest, WireServer
from tests.servers.google_server import error_body, response_body
from tests.servers.openai_batch_server import LineFault, judge_answer, prompt_tokens

_VERSION = r"/(?:v1|v1beta|v1alpha)"
LIVE = re.compile(_VERSION + r"/models/(?P<model>[^/:]+):generateContent$")
CREATE = re.compile(_VERSION + r"/models/(?P<model>[^/:]+):batchGenerateContent$")
GET = re.compile(_VERSION + r"/batches/(?P<id>[^/?]+)$")
LIST = re.compile(_VERSION + r"/batches$")


def _payload(request: dict[str, Any]) -> dict[str, Any]:
    return {"system": request.get("systemInstruction"), "contents": request.get("contents")}


def answer_body(request: dict[str, Any], model: str) -> dict[str, Any]:
    payload = _payload(request)
    body = response_body(judge_answer(payload), model=model)
    body["usageMetadata"] = {"promptTokenCount": prompt_tokens(payload), "candidatesTokenCount": 9}
    body["responseId"] = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
    return body


class GoogleBatchServer(WireServer):
    def __init__(self, *, line_fault: LineFault | None = None, polls_per_stage: int = 2) -> None:
        super().__init__(None)
        self.httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.line_fault = line_fault
        self.polls_per_stage = max(1, polls_per_stage)
        self.hold = threading.Event()
        self.jobs: dict[str, dict[str, Any]] = {}
        self.polls: Counter[str] = Counter()
        self.seen_keys: Counter[str] = Counter()
        self._ids = itertools.count(1)

    def __enter__(self) -> GoogleBatchServer:
        self.start()
        return self

    def created(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.jobs.values())

    def live_calls(self) -> int:
        return sum(1 for r in self.requests if LIVE.match(urlsplit(r.path).path))

    def default_reply(self, request: SeenRequest) -> Reply:
        path = urlsplit(request.path).path
        body = request.body if isinstance(request.body, dict) else {}
        if (m := LIVE.match(path)) and request.method == "POST":
            return Reply(body=answer_body(body, m["model"]))
        if (m := CREATE.match(path)) and request.method == "POST":
            return self._create(m["model"], body)
        if LIST.match(path) and request.method == "GET":
            with self.lock:
                jobs = [self._public(j) for j in reversed(list(self.jobs.values()))]
            return Reply(body={"operations": jobs})
        if (m := GET.match(path)) and request.method == "GET":
            return self._get(f"batches/{m['id']}")
        return Reply(404, error_body(404, "NOT_FOUND", f"no route {request.method} {path}"))

    @staticmethod
    def _public(job: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in job.items() if not k.startswith("_")}

    def _create(self, model: str, body: dict[str, Any]) -> Reply:
        batch = body.get("batch") or {}
        requests = (((batch.get("inputConfig") or {}).get("requests") or {}).get("requests")) or []
        if not requests:
            return Reply(400, error_body(400, "INVALID_ARGUMENT", "batch.input_config: no requests"))
        with self.lock:
            name = f"batches/job{next(self._ids):04d}"
            for r in requests:
                self.seen_keys[(r.get("metadata") or {}).get("key", "")] += 1
            job = {
                "name": name,
                "metadata": {
                    "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                    "name": name,
                    "model": f"models/{model}",
                    "displayName": batch.get("displayName"),
                    "state": "BATCH_STATE_PENDING",
                    "createTime": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                },
                "_model": model,
                "_requests": [
                    (r, self.seen_keys[(r.get("metadata") or {}).get("key", "")]) for r in requests
                ],
            }
            self.jobs[name] = job
        return Reply(body=self._public(job))

    def _get(self, name: str) -> Reply:
        with self.lock:
            job = self.jobs.get(name)
            if job is None:
                return Reply(404, error_body(404, "NOT_FOUND", f"no batch {name}"))
            meta = job["metadata"]
            if meta["state"] in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
                self.polls[name] += 1
                if self.polls[name] >= 2 * self.polls_per_stage and not self.hold.is_set():
                    self._finish(job)
                elif self.polls[name] >= self.polls_per_stage:
                    meta["state"] = "BATCH_STATE_RUNNING"
            return Reply(body=self._public(job))

    def _finish(self, job: dict[str, Any]) -> None:
        out: list[dict[str, Any]] = []
        for request, attempt in job["_requests"]:
            meta = request.get("metadata") or {}
            fault = self.line_fault(str(meta.get("key", "")), attempt) if self.line_fault else None
            if fault is None:
                out.append({"response": answer_body(request["request"], job["_model"]), "metadata": meta})
            elif fault == "error":
                out.append(
                    {"error": {"code": 13, "message": "Internal error encountered."}, "metadata": meta}
                )
            elif fault == "invalid":
                out.append(
                    {
                        "error": {"code": 3, "message": "Request contains an invalid argument."},
                        "metadata": meta,
                    }
                )
            # "lost": no line
        job["metadata"]["state"] = "BATCH_STATE_SUCCEEDED"
        job["metadata"]["output"] = {"inlinedResponses": {"inlinedResponses": out}}
        job["done"] = True
