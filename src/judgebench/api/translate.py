"""The translate stage: make (or import) the variants of the run's items in each condition, audit them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgebench.api.datasets import load_run_dataset, pick_items, run_folder
from judgebench.api.options import CallOptions
from judgebench.api.stages import Counted, Stage, run_stage
from judgebench.api.study import StudyData
from judgebench.batch import batch_rounds
from judgebench.conditions import load_conditions, select_conditions
from judgebench.config import defaults
from judgebench.costing.durations import announce, expected, stage_time
from judgebench.costing.estimate import Estimate, estimate_translation, translation_output_tokens
from judgebench.data import Dataset
from judgebench.errors import ConfigError
from judgebench.execution import Execution
from judgebench.models import JudgeSpec
from judgebench.models.client import ModelClient
from judgebench.progress import ProgressReporter
from judgebench.records import Condition, Item, Variant
from judgebench.records.manifest import DatasetEntry, TranslateStage
from judgebench.records.numbers import USER_NUMBERS, NonNegative
from judgebench.records.outcomes import TranslateOutcome
from judgebench.store.run_folder import RunDir
from judgebench.translate.stage import (
    import_variants,
    load_variants_file,
    prune_failures,
    translate_items,
    write_audit,
)
from judgebench.translate.translator import TranslatorSettings, planned_messages


class TranslateRequest(StudyData):
    """What `judgebench translate` asks for (INTERFACE.md): the Study's data (conditions None: zh, ls)
    and the translator; defaults are the CLI's."""

    model_config = ConfigDict(**USER_NUMBERS, arbitrary_types_allowed=True)

    # leave out (and count) hub rows with a null or empty text; recorded, so later stages do too
    skip_bad_rows: bool = False
    translator: str = defaults.MODEL
    # import ready-made variants instead of calling a translator (the audit still runs)
    variants_file: Path | None = None
    dry_run: bool = False
    settings: TranslatorSettings = Field(default_factory=TranslatorSettings)
    # USD: stop scheduling paid calls before this budget would be passed
    max_cost: NonNegative | None = None


class TranslateResult(BaseModel):
    outcome: TranslateOutcome | None = None
    imported: int = 0
    audit_summary: dict[str, Any] = Field(default_factory=dict)
    flags: int = 0
    estimate: Estimate | None = None
    # imported lines left out because their item or condition was not selected
    skipped_variants: int = 0
    # where imported variants came from: the variants file, or `dataset:SPEC` (M-RewardBench)
    imported_from: str | None = None


def _import_lines(
    request: TranslateRequest, ds: Dataset, items: Sequence[Item], chosen: Sequence[Condition]
) -> tuple[list[Variant], int]:
    """The variants file's lines for the selected items and conditions, and how many were left out."""
    assert request.variants_file is not None
    names = [c.name for c in load_conditions().values()]
    variants = load_variants_file(request.variants_file, ds.by_id(), names)
    wanted = {i.id for i in items}
    selected = {c.name for c in chosen}
    kept = [v for v in variants if v.item_id in wanted and v.condition in selected]
    return kept, len(variants) - len(kept)


def _dataset_lines(
    run: RunDir, ds: Dataset, items: Sequence[Item], provided: Sequence[Condition]
) -> list[Variant]:
    """The dataset's own variants (M-RewardBench) of the selected items that the run lacks."""
    wanted = {i.id for i in items}
    held = run.variants().latest()
    return [
        v
        for c in provided
        for v in ds.variants[c.name]
        if v.item_id in wanted and held.get((v.item_id, v.condition)) != v
    ]


def _split_conditions(
    req: TranslateRequest, ds: Dataset, chosen: Sequence[Condition]
) -> tuple[list[Condition], list[Condition]]:
    """(conditions whose variants the dataset carries, conditions to translate)."""
    if req.variants_file is not None:
        return [], []
    absent = [c.name for c in chosen if c.name in ds.absent_languages]
    if absent:
        where = "; ".join(f"{c}: {ds.absent_languages[c]}" for c in absent)
        raise ConfigError(
            f"{ds.spec} has no variants for {', '.join(absent)} in this copy (expected {where}); "
            f"it holds {', '.join(sorted(ds.variants)) or 'none'}"
        )
    provided = [c for c in chosen if ds.provides(c.name)]
    return provided, [c for c in chosen if not ds.provides(c.name)]


def _untranslated(run: RunDir, items: Sequence[Item], chosen: Sequence[Condition]) -> list[Item]:
    existing = run.variants().latest()
    return [i for i in items if any((i.id, c.name) not in existing for c in chosen)]


async def _translate_by_batch(
    run: RunDir,
    items: Sequence[Item],
    conditions: Sequence[Condition],
    client: ModelClient,
    *,
    settings: TranslatorSettings,
    mode: Execution,
) -> TranslateOutcome:
    """Translate through the Batch API: each round submits what the stage could not answer from the
    cache; the last pass (all answers stored) writes the records. Totals come from the client."""

    def complete() -> set[str]:
        held = run.variants().latest()
        return {i.id for i in items if all((i.id, c.name) in held for c in conditions)}

    done_before = complete()
    outcome: TranslateOutcome = await batch_rounds(
        client,
        lambda view: translate_items(run, items, conditions, view, settings),
        run.path,
        poll_interval=mode.poll_interval,
        log=mode.log,
    )
    prune_failures(run)
    stats = client.stats
    # earlier passes already wrote the variants whose answers came back in earlier rounds
    return outcome.model_copy(
        update={
            "already_done": len(done_before),
            "translated": len(complete() - done_before),
            "provider_calls": stats.calls,
            "cache_hits": stats.cache_hits,
            "input_tokens": stats.input_tokens,
            "output_tokens": stats.output_tokens,
            "cost_usd": round(stats.cost_usd, 6),
        }
    )


async def _translate_live_or_batch(
    run: RunDir,
    items: Sequence[Item],
    chosen: Sequence[Condition],
    client: ModelClient,
    request: TranslateRequest,
    *,
    mode: Execution,
    progress: ProgressReporter,
) -> TranslateOutcome:
    try:
        if mode.batch:
            return await _translate_by_batch(run, items, chosen, client, settings=request.settings, mode=mode)
        return await translate_items(run, items, chosen, client, request.settings, progress=progress)
    finally:
        await client.aclose()


def _counted(
    run: RunDir,
    items: Sequence[Item],
    chosen: Sequence[Condition],
    client: ModelClient,
    request: TranslateRequest,
) -> Counted:
    """The items still to translate, and the time their calls are expected to take."""
    todo = _untranslated(run, items, chosen)
    calls = sum(len(planned_messages(item, chosen, request.settings)) for item in todo)
    replies = translation_output_tokens(todo, chosen, client.spec)
    took = [expected(client.name, client.spec, client.settings, calls, "translate", output_tokens=replies)]
    what = f"translate {client.name}"
    return Counted(len(todo), what, (stage_time(took), announce(took, what)))


def _entry(
    run: RunDir,
    request: TranslateRequest,
    result: TranslateResult,
    translator: str,
    chosen: Sequence[Condition],
) -> TranslateStage:
    """Every condition the run now holds variants for (a later `--conditions ja` adds, never
    replaces), in the configured order (zh before ls): the report names pairs zh->ls from it."""
    held = {v.condition for v in run.variants().latest().values()}
    previous = run.manifest().stages.translate
    earlier = previous.paid_usd() if previous is not None else 0.0
    paid = result.outcome.cost_usd if result.outcome is not None else 0.0
    entry = TranslateStage(
        spent_usd=round(earlier + paid, 6),
        translator=translator,
        conditions=[cond for name, cond in load_conditions().items() if name in held],
        last_conditions=[c.name for c in chosen],
        subset=request.subset,
        skipped_variants=result.skipped_variants,
        limit=request.limit,
        imported=result.imported,
        outcome=result.outcome,
        audit=result.audit_summary,
        settings=dict(request.settings.__dict__),
    )
    return entry


def translate(
    run_dir: str | Path | RunDir,
    request: TranslateRequest | None = None,
    *,
    options: CallOptions | None = None,
    execution: Execution | None = None,
) -> TranslateResult:
    """Make (or import) the zh/ls/... variants of the run's items and audit them.

    With `execution.batch` every call goes through the provider's Batch API in rounds (a re-ask or a
    piece depends on an earlier answer); `max_cost` stops scheduling paid calls at the budget."""
    req = request or TranslateRequest()
    options = options or CallOptions()
    mode = execution or Execution()
    run = run_folder(run_dir)
    # validate every input before the run folder is created or changed
    ds, entry = load_run_dataset(
        run, req.dataset, req.data_dir, skip_bad_rows=req.skip_bad_rows, conditions=req.conditions
    )
    chosen = select_conditions(req.conditions)
    items = pick_items(ds.items, req.subset, req.limit, ds.spec)
    result = TranslateResult()
    variants: list[Variant] = []
    # a dataset with its own language variants (M-RewardBench) needs no translator for those
    provided, to_translate = _split_conditions(req, ds, chosen)
    if req.variants_file is not None:
        variants, result.skipped_variants = _import_lines(req, ds, items, chosen)
    elif provided:
        variants = _dataset_lines(run, ds, items, provided)
    # a translator as before unless the dataset carries every chosen condition (or a file is imported)
    use_translator = req.variants_file is None and (bool(to_translate) or not provided)
    translator_spec = options.resolve(req.translator) if use_translator else None
    if translator_spec is not None and not translator_spec.traits.translates:
        raise ConfigError(
            f"{req.translator}: this provider only judges, it cannot translate; pass --translator MODEL "
            "(e.g. local), or import ready-made variants first with `judgebench translate --run RUN "
            "--variants FILE` (a flag of translate, not of run)"
        )
    if req.dry_run:
        source = f"import:{Path(str(req.variants_file)).name}" if req.variants_file else f"dataset:{ds.spec}"
        result = result.model_copy(
            update={"imported": len(variants), "imported_from": source if variants else None}
        )
        if translator_spec is None:
            return result
        todo = _untranslated(run, items, to_translate)
        estimate = estimate_translation(
            todo, to_translate, translator_spec, len(items) - len(todo), req.settings
        )
        return result.model_copy(update={"estimate": estimate})
    paying = translator_spec is not None and bool(_untranslated(run, items, to_translate))
    stage = _Translating(
        req, ds, entry, items, chosen, variants, result, options=options, mode=mode, spec=translator_spec,
        provided=provided, to_translate=to_translate, paying=paying,
    )  # fmt: skip
    return run_stage(run, stage, options=options, execution=mode)


@dataclass
class _Translating(Stage[TranslateResult]):
    """The translate stage's parts for the runner (api/stages.py): its inputs read and checked."""

    req: TranslateRequest
    ds: Dataset
    entry: DatasetEntry
    items: list[Item]
    chosen: list[Condition]
    variants: list[Variant]
    result: TranslateResult
    options: CallOptions
    mode: Execution
    spec: JudgeSpec | None  # the translator (None: imported or the dataset's own)
    provided: list[Condition]  # conditions whose variants the dataset carries
    to_translate: list[Condition]
    paying: bool  # whether the translator has calls to make (its key is needed)
    client: ModelClient | None = field(default=None, init=False)
    translator: str = field(default="", init=False)
    name = "translate"

    def __post_init__(self) -> None:
        self.max_cost = self.req.max_cost

    def keys(self) -> list[JudgeSpec]:
        return [self.spec] if self.spec is not None and self.paying else []

    def connect(self) -> list[ModelClient]:
        self.client = self.options.client(self.spec) if self.spec is not None else None
        return [self.client] if self.client is not None else []

    def dataset(self) -> DatasetEntry:
        return self.entry

    def progress(self, run: RunDir) -> Counted | None:
        # a batch goes in rounds of its own; an import or the dataset's own variants make no call
        if self.client is None or self.mode.batch:
            return None
        return _counted(run, self.items, self.to_translate, self.client, self.req)

    def execute(self, run: RunDir, progress: ProgressReporter) -> TranslateResult:
        req, ds, client, result, variants = self.req, self.ds, self.client, self.result, self.variants
        if client is None or variants:
            import_variants(run, variants)
        result.imported = len(variants)
        if req.variants_file is not None:
            translator = f"import:{Path(str(req.variants_file)).name}"
        else:
            translator = f"dataset:{ds.spec}"
        if self.provided:
            result.imported_from = translator
        if client is not None:
            translator = client.name if not self.provided else f"{client.name} + dataset:{ds.spec}"
            result.outcome = asyncio.run(
                _translate_live_or_batch(
                    run,
                    self.items,
                    self.to_translate,
                    client,
                    req,
                    mode=self.mode,
                    progress=progress,
                )
            )
        flags, result.audit_summary = write_audit(run, ds.by_id(), self.chosen)
        result.flags = len(flags)
        self.translator = translator
        return result

    def record(self, run: RunDir, result: TranslateResult) -> TranslateStage:
        return _entry(run, self.req, result, self.translator, self.chosen)
