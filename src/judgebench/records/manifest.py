"""The run's manifest (`manifest.json`): what each stage did, with which settings, from which command.

It is typed so that a stage reads what an earlier one recorded by attribute, never by chained
`.get()`; `schema_version` says which layout a file has, and `migrate` lifts every layout an earlier
release wrote to this one (ordered steps, one per version), so old run folders keep working.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judgebench.records.condition_specs import Condition
from judgebench.records.outcomes import JudgeOutcome, TranslateOutcome

SCHEMA_VERSION = 2

ExecutionModeName = Literal["live", "batch", "write-batch-file", "import-batch"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetEntry(_Record):
    """The dataset a run is about; a later stage refuses to mix in another (checksum)."""

    spec: str
    subset: str | None = None
    source: str | None = None
    checksum: str | None = None
    items: int | None = None
    files: dict[str, str] = Field(default_factory=dict)
    # the local copy it was read from (None: bundled, downloaded or a plain file path)
    data_dir: str | None = None
    # condition -> SHA-256 of what it reads ("en": the items), for a dataset that carries its own
    # variants (M-RewardBench); `checksum` then covers them all. Empty in manifests of older releases.
    conditions: dict[str, str] = Field(default_factory=dict)
    # rows with a null or empty text left out at load (skip_bad_rows), so later stages load the same
    skip_bad_rows: bool = False
    skipped_rows: int = 0

    def same_data(self, other: DatasetEntry) -> bool:
        """Whether `other` is the dataset this entry recorded. An older release recorded only the
        items' sum (no `conditions`): that sum is then compared with the items' sum of `other`."""
        if not self.checksum or self.checksum == other.checksum:
            return True
        return not self.conditions and other.conditions.get("en") == self.checksum


class StageEntry(_Record):
    """Fields every stage records; `RunDir.record_stage` fills them."""

    finished_at: str = ""
    judgebench_version: str = ""
    command: list[str] = Field(default_factory=list)


class TranslateStage(StageEntry):
    translator: str
    # every condition the run holds variants for, in the configured order (the report names
    # pairs such as zh->ls from it)
    conditions: list[Condition]
    last_conditions: list[str] = Field(default_factory=list)
    subset: str | None = None
    skipped_variants: int = 0
    limit: int | None = None
    imported: int = 0
    outcome: TranslateOutcome | None = None
    audit: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    # USD paid by every translate command of this run, summed (None: written before it was kept)
    spent_usd: float | None = None

    def condition_names(self) -> list[str]:
        return [c.name for c in self.conditions]

    def paid_usd(self) -> float:
        """What this run's translate commands paid in all (an older manifest: its last command's)."""
        paid = self.spent_usd if self.spent_usd is not None else None
        if paid is None:
            paid = self.outcome.cost_usd if self.outcome is not None else 0.0
        return paid if math.isfinite(paid) and paid > 0 else 0.0  # an edited figure lifts no cap


class TemplateEntry(_Record):
    name: str
    hash: str
    path: str  # "default" for the bundled template
    tell_condition: bool = False

    def user_path(self) -> str | None:
        """The template file a later stage should load (None: the bundled default)."""
        return None if self.path == "default" else self.path


class CallMeaning(_Record):
    """What a judge's calls mean, beyond the prompt's item: a resumed judge must ask the same (a
    resume that changed any of it would make one judge of two settings; `api/resume.py`)."""

    spec: str
    template: str
    template_hash: str  # the template's text, max_tokens, structured output and completion form
    temperature: float | None = None  # configs/judges.toml's request defaults for the judge
    max_tokens: int | None = None
    completion: bool = False  # a base model, asked in the template's completion form

    def changes(self, other: CallMeaning) -> list[str]:
        """What `other` asks differently, in words ("template judge_default (hash ..) -> strict")."""
        out = []
        for name in type(self).model_fields:
            old, new = getattr(self, name), getattr(other, name)
            if old != new and name != "template_hash":
                out.append(f"{name} {old} -> {new}")
        if self.template == other.template and self.template_hash != other.template_hash:
            hashes = f"hash {self.template_hash} -> {other.template_hash}"
            out.append(f"template {self.template}'s text or settings ({hashes})")
        return out


class JudgeEntry(_Record):
    """One judge of the run: its spec, the settings it ran with, and its last invocation's totals."""

    spec: str
    settings: dict[str, Any] = Field(default_factory=dict)
    outcome: JudgeOutcome
    stats: dict[str, Any] = Field(default_factory=dict)
    # what its calls meant (absent in runs written before issue 29: the stage's template stands in)
    meaning: CallMeaning | None = None


class SequentialCheck(_Record):
    """One readiness check of `judge --until-settled`: its anytime-valid interval at the stop."""

    name: str  # en_accuracy, en_position_inconsistency, ..., flip_rate:zh, position_increase:zh
    condition: str
    limit: float
    n: int
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    state: Literal["fail", "ok", "open"] = "open"


class SequentialStop(_Record):
    """Where and why `judge --until-settled` stopped a judge (`running` while it is going: a killed
    run keeps it, so its readiness is not complete)."""

    reason: Literal["running", "settled", "items exhausted", "interrupted"]
    items: int  # items judged, in the seeded order
    items_total: int
    calls: int  # calls planned for the judged items
    calls_full: int  # calls of the full design
    seed: int
    round_items: int
    confidence: float
    verdicts: dict[str, str] = Field(default_factory=dict)  # per target: pass / fail / inconclusive
    checks: list[SequentialCheck] = Field(default_factory=list)

    @property
    def decided(self) -> bool:
        return bool(self.verdicts) and all(v != "inconclusive" for v in self.verdicts.values())

    @property
    def final(self) -> bool:
        """A complete stage: settled, or every item judged."""
        return self.reason in ("settled", "items exhausted")


class ProbeEntry(_Record):
    """A probe condition the judge stage planned (`judge --probes`): which probe made it from which
    condition, and the template its calls used when that is not the run's (the template probe)."""

    probe: str
    base: str
    template: TemplateEntry | None = None


class JudgeStage(StageEntry):
    judges: dict[str, JudgeEntry] = Field(default_factory=dict)
    template: TemplateEntry
    conditions: list[str] = Field(default_factory=list)
    tie_probes: bool = True
    planned: int = 0
    notes: list[str] = Field(default_factory=list)
    mode: ExecutionModeName = "live"
    max_cost_usd: float | None = None
    # judge --until-settled: each judge's stop, and the full design's size (`planned` counts only
    # the calls of the items judged)
    stops: dict[str, SequentialStop] = Field(default_factory=dict)
    full_planned: int | None = None
    # probe condition (`length`, `zh+length`, `template-1`) -> what made it; kept across commands
    probes: dict[str, ProbeEntry] = Field(default_factory=dict)


class ReportStage(StageEntry):
    settings: dict[str, Any] = Field(default_factory=dict)
    records: int = 0
    outputs: list[str] = Field(default_factory=list)


class BBEStage(StageEntry):
    out: str
    feasible: bool
    calibrations: int
    neighbours_judged: int = 0


class HeadlineEntry(_Record):
    """A number by the source's own convention (JudgeBench's score, Arena-Hard's, MT-Bench agreement),
    recorded so the report can put it beside judgebench's own and a user beside the published one."""

    name: str
    value: float | None
    n: int
    subset: str = "all"
    system: str | None = None
    convention: str = ""


class ImportStage(StageEntry):
    """Published results or a peer's judge log brought in as judgments (`judgebench import FORMAT`)."""

    source: str
    evaluator: str
    judgments: int
    appended: int
    invalid: int
    files: list[str] = Field(default_factory=list)
    missing_subsets: list[str] = Field(default_factory=list)
    # the importer's name and every file it read with the SHA-256 of its bytes (absent before issue 43)
    format: str | None = None
    checksums: dict[str, str] = Field(default_factory=dict)
    headlines: list[HeadlineEntry] = Field(default_factory=list)
    human_labels: int = 0
    notes: list[str] = Field(default_factory=list)


class Stages(_Record):
    translate: TranslateStage | None = None
    judge: JudgeStage | None = None
    report: ReportStage | None = None
    bbe: BBEStage | None = None
    imports: dict[str, ImportStage] = Field(default_factory=dict)


class HistoryEntry(_Record):
    stage: str
    at: str
    command: list[str] = Field(default_factory=list)


class Manifest(_Record):
    schema_version: int = SCHEMA_VERSION
    judgebench_version: str = ""
    created_at: str = ""
    dataset: DatasetEntry | None = None
    stages: Stages = Field(default_factory=Stages)
    history: list[HistoryEntry] = Field(default_factory=list)

    def judge_names(self) -> list[str]:
        return list(self.stages.judge.judges) if self.stages.judge else []


# --- migrations: one step per schema version, applied in order -----------------------------------


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Release 0.1.0 (no schema_version): `import:NAME` stages lived beside the others, and the
    report stage counted its records as `metrics` when run from the library, `records` from the CLI."""
    stages = dict(data.get("stages") or {})
    imports = {
        key.removeprefix("import:"): value for key, value in stages.items() if key.startswith("import:")
    }
    stages = {key: value for key, value in stages.items() if not key.startswith("import:")}
    report = stages.get("report")
    if isinstance(report, dict) and "metrics" in report:
        report = dict(report)
        report.setdefault("records", report.pop("metrics"))
        stages["report"] = report
    stages["imports"] = imports
    return {**data, "stages": stages, "schema_version": 2}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Lift a manifest of any earlier layout to SCHEMA_VERSION (a file with no version is 1).

    Raises ValueError for a layout newer than this release knows."""
    version = int(data.get("schema_version", 1))
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"written by a newer judgebench (manifest schema {version}; this release reads up to "
            f"{SCHEMA_VERSION}): upgrade judgebench to use this run"
        )
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
    return data
