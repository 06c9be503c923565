"""Shared pieces of the end-to-end tests: a dataset with variants, a deterministic judge server
(optionally faulty), a private configs folder with fast-backoff judges, and run-folder snapshots.

The judge's verdict is a pure function of the prompt it is shown, so any two runs over the same data
(clean or faulty, killed or not) must end with the same judgments and the same metrics.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgebench.config.paths import configs_dir
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import chat_body, error_body

SUBSETS = (
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)
# A named judge (configs/judges.toml) with a tiny backoff (its judges.toml table sets it, as a user would).
FAST_JUDGE = "e2e-judge"
FAST_JUDGE_SPEC = "openai-compatible:e2e-judge"


def write_items(path: Path, n: int = 40) -> Path:
    """`n` pairwise items over the five LLMBar subsets; the gold output carries the [good] tag."""
    rows = []
    for i in range(n):
        label = 1 + (i * 7 % 11) % 2
        good = f"[good] a careful answer to task {i} with the steps 1, 2 and 3"
        bad = f"a loose answer to task {i} that skips step {i % 3 + 1}"
        out1, out2 = (good, bad) if label == 1 else (bad, good)
        rows.append(
            {
                "id": f"q{i:03d}",
                "subset": SUBSETS[i % len(SUBSETS)],
                "instruction": f"Task {i}: explain how to do thing number {i} in three steps.",
                "output_1": out1,
                "output_2": out2,
                "label": label,
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_variants(items_path: Path, path: Path) -> Path:
    """zh and ls variants of every item (the [good] tag survives translation, as a label should)."""
    lines = []
    for raw in items_path.read_text(encoding="utf-8").splitlines():
        item = json.loads(raw)
        n = item["id"]
        for cond, word in (("zh", "回答"), ("ls", "回答 answer")):
            lines.append(
                json.dumps(
                    {
                        "item_id": n,
                        "condition": cond,
                        "instruction": f"任务 {n}：用三个步骤解释如何完成第 {n[1:]} 件事。",
                        "output_1": f"{word}：" + item["output_1"],
                        "output_2": f"{word}：" + item["output_2"],
                    },
                    ensure_ascii=False,
                )
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def private_configs(dest: Path, *, concurrency: int = 8) -> Path:
    """A copy of configs/ with a fast-backoff named judge, for JUDGEBENCH_CONFIGS."""
    shutil.copytree(configs_dir(), dest)
    with open(dest / "judges.toml", "a", encoding="utf-8") as fh:
        fh.write(
            f'\n[judges.{FAST_JUDGE}]\nspec = "{FAST_JUDGE_SPEC}"\n'
            f"concurrency = {concurrency}\nbackoff_initial = 0.01\nbackoff_max = 0.05\n"
        )
    return dest


def _unit(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _user_text(request: SeenRequest) -> str:
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or []
    return str(messages[-1]["content"]) if messages else str(body.get("prompt", ""))


def verdict_text(user: str) -> str:
    """The judge's reply for a prompt: mostly right, sometimes wrong, Tie or unreadable."""
    a = user.split("[Response A]", 1)[-1].split("[Response B]", 1)[0]
    b = user.split("[Response B]", 1)[-1]
    u = _unit("verdict", user)
    good_a, good_b = "[good]" in a, "[good]" in b
    if good_a != good_b:
        right, wrong = ("A", "B") if good_a else ("B", "A")
        winner = right if u < 0.72 else wrong if u < 0.84 else "Tie" if u < 0.93 else None
    else:  # tie-probes: the same gold output on both sides
        winner = "Tie" if u < 0.6 else "A" if u < 0.85 else "B"
    if winner is None:
        return "Both responses have merit; I cannot decide."
    return json.dumps({"winner": winner, "confidence": round(0.5 + u / 2, 3), "reason": "scripted"})


@dataclass
class FaultPlan:
    """Shares of each fault per request; which request gets which is decided by a seeded RNG."""

    rate_limited: float = 0.10
    server_error: float = 0.05
    timeout: float = 0.02
    malformed: float = 0.02
    timeout_delay: float = 1.6


@dataclass
class DeterministicJudge:
    """A responder for OpenAIServer: a verdict that depends on the prompt only, faults per request.

    `answered[prompt]` lists the monotonic times at which requests answered with a usable 200
    arrived; the answer is written `delay` seconds later. A test can so count repeated successful
    calls, tell which client process sent them and how long before a kill they were answered."""

    faults: FaultPlan | None = None
    seed: int = 0
    delay: float = 0.0
    answered: dict[str, list[float]] = field(default_factory=dict)
    outcomes: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def __call__(self, request: SeenRequest) -> Reply:
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=error_body(f"no route {request.path}"))
        if not isinstance(request.body, dict) or not request.body.get("messages"):
            # a body cut short by a killed client: no answer can reach anyone
            return Reply(status=400, body=error_body("incomplete request body"))
        user = _user_text(request)
        model = str(request.body.get("model", "m")) if isinstance(request.body, dict) else "m"
        body = chat_body(verdict_text(user), model=model, prompt_tokens=len(user) // 4, completion_tokens=20)
        with self.lock:
            fault = self._fault()
            self.outcomes[fault] += 1
            if fault == "ok":
                self.answered.setdefault(user, []).append(time.monotonic())
            headers = {"retry-after": "0"} if self.rng.random() < 0.5 else {"retry-after-ms": "20"}
        if fault == "429":
            return Reply(
                status=429, body=error_body("rate limited", type_="rate_limit_exceeded"), headers=headers
            )
        if fault == "500":
            return Reply(status=500, body=error_body("upstream exploded", type_="server_error"))
        if fault == "timeout":
            return Reply(body=body, delay=self.faults.timeout_delay if self.faults else 0.0)
        if fault == "truncated":
            return Reply(body=json.dumps(body)[: len(json.dumps(body)) // 2])
        if fault == "html":
            return Reply(
                body="<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", content_type="text/html"
            )
        return Reply(body=body, delay=self.delay)

    def _fault(self) -> str:
        if self.faults is None:
            return "ok"
        f = self.faults
        u = self.rng.random()
        edges = [
            ("429", f.rate_limited),
            ("500", f.server_error),
            ("timeout", f.timeout),
            ("malformed", f.malformed),
        ]
        for name, share in edges:
            if u < share:
                return name if name != "malformed" else ("truncated" if self.rng.random() < 0.5 else "html")
            u -= share
        return "ok"

    def repeats(self) -> dict[str, list[float]]:
        """Prompts answered with a usable 200 more than once."""
        with self.lock:
            return {k: list(v) for k, v in self.answered.items() if len(v) > 1}


# --- comparing runs ---------------------------------------------------------------------------------


def metrics_by_key(run: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    """metrics.json keyed by (judge, metric, condition, subset, filtered)."""
    records = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in records:
        key = (r["judge"], r["metric"], r["condition"], r["subset"], r["filtered"])
        assert key not in out, f"duplicate metric record {key}"
        out[key] = r
    return out


def same_metrics(
    a: dict[tuple[Any, ...], dict[str, Any]], b: dict[tuple[Any, ...], dict[str, Any]]
) -> list[str]:
    """Differences between two metrics.json files; floats may differ in the last bits only (a sum
    over judgments in another file order), everything else must be equal."""
    problems = [f"only in one: {k}" for k in set(a) ^ set(b)]
    for key in set(a) & set(b):
        ra, rb = a[key], b[key]
        for name in set(ra) | set(rb):
            va, vb = ra.get(name), rb.get(name)
            if isinstance(va, float) and isinstance(vb, float):
                if not math.isclose(va, vb, rel_tol=1e-12, abs_tol=1e-15):
                    problems.append(f"{key} {name}: {va} != {vb}")
            elif va != vb:
                problems.append(f"{key} {name}: {va!r} != {vb!r}")
    return problems


def tree_digest(root: Path) -> dict[str, str]:
    """Every file and folder under `root` with a hash of its bytes (folders: 'dir')."""
    if not root.exists():
        return {}
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        out[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out
