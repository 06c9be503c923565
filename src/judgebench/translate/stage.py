"""The `translate` stage: make (or import) the variants of every item, then audit them.

variants.jsonl is append-only (last line per item and condition wins), so a rerun only asks for
what is missing; failed items are kept in translation_failures.jsonl with their reason and retried by
the next run. audit.jsonl is rewritten whole from all variants after each run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from judgebench.conditions import SOURCE, Condition, load_conditions
from judgebench.errors import InputError
from judgebench.models.client import ModelClient
from judgebench.outside import loads
from judgebench.progress import ProgressReporter
from judgebench.records import TEXT_FIELDS, AuditFlag, Item, TranslationFailure, Variant
from judgebench.records.outcomes import TranslateOutcome
from judgebench.records.sanitize import surrogate_problem
from judgebench.store.atomic_files import atomic_write_text
from judgebench.store.run_folder import (
    AUDIT,
    TRANSLATION_FAILURES,
    IndexedAppender,
    JsonlAppender,
    RunDir,
    last_per_key,
    read_jsonl,
)
from judgebench.translate.audit import AuditRules, audit_all, summarize
from judgebench.translate.translator import TranslatorSettings, translate_item

VariantKey = tuple[str, str]


def read_variants(path: Path) -> dict[VariantKey, Variant]:
    """A variants file read afresh (a stage reads its run's through `RunDir.variants()`, once)."""
    return last_per_key(read_jsonl(path, Variant), key=lambda v: (v.item_id, v.condition))


def audit_rules(condition: Condition) -> AuditRules:
    if condition.kind == "probe":  # made from the items as data: nothing translated to audit
        raise ValueError(f"probe condition '{condition.name}' has no translation audit")
    return AuditRules(
        kind=condition.kind,
        script=condition.script,
        min_length_ratio=condition.audit.min_length_ratio,
        min_target_script_share=condition.audit.min_target_script_share,
        numbers_missing_min_source=condition.audit.numbers_missing_min_source,
        numbers_count_max_diff=condition.audit.numbers_count_max_diff,
    )


def _same_text(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _variant_line(file: Path, number: int, line: bytes) -> Variant:
    """One line of a variants file as a Variant (its provenance set to the file)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"bytes that are not UTF-8 at byte {exc.start}", path=str(file), line=number
        ) from None
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg}, column {exc.colno})", path=str(file), line=number) from None
    if not isinstance(data, dict):
        raise InputError("a line must be a JSON object", path=str(file), line=number)
    problem = surrogate_problem(data)
    if problem is not None:
        raise InputError(problem, path=str(file), line=number)
    data.pop("source", None)
    try:
        return Variant.model_validate({**data, "source": f"import:{file.name}"})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(map(str, err["loc"]))
        raise InputError(
            err["msg"], path=str(file), line=number, item=data.get("item_id"), field=field
        ) from None


def _check_source_line(file: Path, number: int, variant: Variant, item: Item) -> None:
    """INTERFACE: en is the dataset itself and need not be listed; listed, it must be the dataset
    (line endings and surrounding whitespace aside)."""
    for name in TEXT_FIELDS:
        if _same_text(getattr(variant, name)) != _same_text(getattr(item, name)):
            raise InputError(
                "an 'en' line must repeat the dataset's text (en is the dataset itself), "
                "and this one differs",
                path=str(file),
                line=number,
                item=variant.item_id,
                field=name,
            )


def _check_target_line(file: Path, number: int, variant: Variant, known_conditions: Sequence[str]) -> None:
    if variant.condition not in known_conditions:
        raise InputError(
            f"condition '{variant.condition}' is not one of {', '.join(known_conditions)}",
            path=str(file),
            line=number,
            item=variant.item_id,
            field="condition",
        )
    for fname in TEXT_FIELDS:
        if len(getattr(variant, fname)) > 1_000_000:
            raise InputError(
                "field longer than 1,000,000 characters",
                path=str(file),
                line=number,
                item=variant.item_id,
                field=fname,
            )


def load_variants_file(
    path: str | Path, items: Mapping[str, Item], known_conditions: Sequence[str]
) -> list[Variant]:
    """Read a ready-made variants file (INTERFACE format); every bad line is an error with its number."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise InputError("variants file not found", path=str(file)) from None
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark from spreadsheet exports
    if not raw.strip():
        raise InputError("the file is empty", path=str(file))
    seen: dict[VariantKey, int] = {}
    out: list[Variant] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        variant = _variant_line(file, number, line)
        if variant.item_id not in items:
            raise InputError(
                "unknown item_id (not in the run's dataset)",
                path=str(file),
                line=number,
                item=variant.item_id,
            )
        if variant.condition == SOURCE:
            _check_source_line(file, number, variant, items[variant.item_id])
            continue
        key = (variant.item_id, variant.condition)
        if key in seen:
            raise InputError(
                f"duplicate variant for condition '{variant.condition}' (first on line {seen[key]})",
                path=str(file),
                line=number,
                item=variant.item_id,
            )
        _check_target_line(file, number, variant, known_conditions)
        seen[key] = number
        out.append(variant)
    return out


def write_audit(
    run: RunDir, items: Mapping[str, Item], conditions: Sequence[Condition]
) -> tuple[list[AuditFlag], dict[str, object]]:
    """Audit every variant the run holds and rewrite audit.jsonl.

    The report filters on every flag in the file, so a run that translates one more condition, or
    one subset, must not drop the flags of the others: variants of any configured condition are
    audited again (the chosen `conditions` win over the config file), and variants of items outside
    `items` keep their previous flags.
    """
    variants = run.variants().latest()
    configured = {c.name: c for c in load_conditions().values()}
    configured.update({c.name: c for c in conditions})
    rules = {name: audit_rules(c) for name, c in configured.items()}
    chosen = [v for v in variants.values() if v.condition in rules and v.item_id in items]
    audited = {(v.item_id, v.condition) for v in chosen}
    kept: list[AuditFlag] = []
    if run.file(AUDIT).exists():
        kept = [
            f
            for f in read_jsonl(run.file(AUDIT), AuditFlag)
            if (f.item_id, f.condition) not in audited and (f.item_id, f.condition) in variants
        ]
    flags = kept + audit_all(items, chosen, rules)
    n_items = len({key[0] for key in variants})
    lines = "".join(json.dumps(f.model_dump(), ensure_ascii=False) + "\n" for f in flags)
    atomic_write_text(run.file(AUDIT), lines)
    return flags, summarize(flags, n_items)


def prune_failures(run: RunDir) -> None:
    """Keep in translation_failures.jsonl only the latest failure of items that still lack a variant.

    Lines are appended as items fail (a kill loses none); afterwards the file is rewritten so that it
    lists exactly what a user still has to fix or rerun, not items a later run translated.
    """
    path = run.file(TRANSLATION_FAILURES)
    if not path.exists():
        return
    variants = run.variants().latest()
    latest = last_per_key(read_jsonl(path, TranslationFailure), key=lambda f: f.item_id)
    open_failures = [f for f in latest.values() if any((f.item_id, c) not in variants for c in f.conditions)]
    atomic_write_text(path, "".join(f.model_dump_json() + "\n" for f in open_failures))


def import_variants(run: RunDir, variants: Sequence[Variant]) -> None:
    with IndexedAppender(run.variants()) as out:
        for variant in variants:
            out.append(variant)


async def translate_items(
    run: RunDir,
    items: Sequence[Item],
    conditions: Sequence[Condition],
    client: ModelClient,
    settings: TranslatorSettings,
    *,
    progress: ProgressReporter | None = None,
) -> TranslateOutcome:
    """Translate the items that lack a variant for some chosen condition; keep failures with reasons."""
    existing = run.variants().latest()
    wanted = [c.name for c in conditions]
    todo = [i for i in items if any((i.id, c) not in existing for c in wanted)]
    failures: list[TranslationFailure] = []
    totals = {
        "provider_calls": 0,
        "cache_hits": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "unpriced_calls": 0,
    }
    cost = 0.0
    translated = 0
    with (
        IndexedAppender(run.variants()) as out,
        JsonlAppender(run.file(TRANSLATION_FAILURES)) as failed_out,
    ):

        async def one(item: Item) -> None:
            nonlocal cost, translated
            missing = [c for c in conditions if (item.id, c.name) not in existing]
            result = await translate_item(client, item, missing, settings)
            tokens = 0
            call_cost: float | None = 0.0
            for call in result.results:
                if call.response is None:
                    continue
                if call.from_cache:
                    totals["cache_hits"] += 1
                    continue
                totals["provider_calls"] += 1
                totals["input_tokens"] += call.response.usage.input_tokens
                totals["output_tokens"] += call.response.usage.output_tokens
                tokens += call.response.usage.input_tokens + call.response.usage.output_tokens
                cost += call.cost_usd or 0.0
                totals["unpriced_calls"] += int(call.cost_usd is None)
                call_cost = None if call.cost_usd is None or call_cost is None else call_cost + call.cost_usd
            if result.failure is not None:
                failure = TranslationFailure(
                    item_id=item.id,
                    conditions=[c.name for c in missing],
                    reason=result.failure,
                    attempts=result.attempts,
                )
                failures.append(failure)
                failed_out.append(failure)
            else:
                for variant in result.variants:
                    out.append(variant)
                translated += 1
            if progress is not None:
                progress.advance(tokens=tokens, cost=call_cost, failed=result.failure is not None)

        await asyncio.gather(*(one(item) for item in todo))
    prune_failures(run)
    return TranslateOutcome(
        items=len(items),
        conditions=wanted,
        already_done=len(items) - len(todo),
        translated=translated,
        failed=failures,
        cost_usd=round(cost, 6),
        **totals,
    )
