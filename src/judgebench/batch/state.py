"""`batches.json` in the run folder: every batch this run submitted, so a restart resumes, not pays again.

A submission is recorded *before* the provider is asked to create it (phase `submitting`, no batch
id yet) and again once the id is known, so a kill at any point leaves a record: an OpenAI batch
created but never saved is found again by listing batches whose metadata carry this run's id and
the submission's id. Every change rewrites the whole file atomically (temp file + rename), reading
it fresh first, so several judges running side by side in one process never lose each other's
entries (each change is one synchronous read-modify-write, with no `await` in between).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from judgebench.errors import RunDirError
from judgebench.records.clock import now_iso
from judgebench.store.atomic_files import atomic_write_json

BATCHES_JSON = "batches.json"

Phase = Literal["submitting", "running", "collected"]


class Submission(BaseModel):
    """One provider batch (or the intent to create one) and the calls it carries."""

    id: str
    spec: str
    provider: str
    backend: str
    endpoint: str
    phase: Phase = "submitting"
    batch_id: str | None = None
    status: str | None = None
    attempt: int = 1
    created_at: str = Field(default_factory=now_iso)
    ended_at: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    succeeded: int = 0
    failed: int = 0
    custom_ids: list[str] = Field(default_factory=list)


class BatchFile(BaseModel):
    run_id: str
    submissions: list[Submission] = Field(default_factory=list)


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:16]}"


class BatchStore:
    """Reads and rewrites `run_dir/batches.json`."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / BATCHES_JSON

    def load(self) -> BatchFile:
        """The file's content; a run without one gets a fresh run id (saved on first change)."""
        if not self.path.exists():
            return BatchFile(run_id=new_id("jb-"))
        try:
            return BatchFile.model_validate(json.loads(self.path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
            raise RunDirError(
                f"{self.path}: unreadable batch state ({type(exc).__name__}); it lists the batches this run "
                "submitted: repair it, or move it away to forget them (their answers would be paid again)"
            ) from exc

    def save(self, data: BatchFile) -> None:
        atomic_write_json(self.path, data.model_dump(mode="json"))

    def run_id(self) -> str:
        """This run's id, written at once so batches created under it can always be found again."""
        data = self.load()
        if not self.path.exists():
            self.save(data)
        return data.run_id

    def upsert(self, sub: Submission) -> None:
        data = self.load()
        for i, old in enumerate(data.submissions):
            if old.id == sub.id:
                data.submissions[i] = sub
                break
        else:
            data.submissions.append(sub)
        self.save(data)

    def remove(self, sub_id: str) -> None:
        data = self.load()
        data.submissions = [s for s in data.submissions if s.id != sub_id]
        self.save(data)

    def active(self) -> list[Submission]:
        return [s for s in self.load().submissions if s.phase != "collected"]
