"""The library entry points. The CLI only parses flags and calls these; tests call them directly.

translate() -> judge() -> report() -> bbe(), each reading and writing one run folder.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from judgebench.conditions import SOURCE, Condition, load_conditions, select_conditions
from judgebench.data import Dataset, load_dataset
from judgebench.data.dataset import select_subset
from judgebench.errors import ConfigError, InputError, JudgebenchError, RunDirError
from judgebench.judge.plan import PlannedCall, plan_calls
from judgebench.judge.run import Execution, JudgeOutcome, execute_plan, existing_judgments, pending_calls
from judgebench.judge.templates import JudgeTemplate, load_template
from judgebench.models.base import ModelRequest
from judgebench.models.client import ModelClient
from judgebench.models.config import build_client, resolve_judge, resolve_judge_full
from judgebench.models.pricing import PriceTable, estimate_tokens_with_method
from judgebench.models.registry import traits_of
from judgebench.models.settings import SettingsOverrides
from judgebench.progress import ProgressReporter
from judgebench.records import Item, Variant
from judgebench.rundir import JUDGMENTS, VARIANTS, RunDir
from judgebench.translate.stage import (
    TranslateOutcome,
    import_variants,
    load_variants_file,
    read_variants,
    translate_items,
    write_audit,
)
from judgebench.translate.translator import TranslatorSettings, planned_messages


@dataclass
class CallOptions:
    """How to reach and pace the models of one command (flags shared by every model command)."""

    base_url: str | None = None
    # None: the judge's settings in configs/judges.toml, else the ProviderSettings defaults
    timeout: float | None = None
    max_retries: int | None = None
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    use_cache: bool = True
    progress: bool | None = None  # None: only on a terminal
    backoff_initial: float | None = None
    backoff_max: float | None = None

    def client(self, name_or_spec: str, prices: PriceTable | None = None) -> ModelClient:
        overrides = SettingsOverrides.model_validate(self, from_attributes=True)
        return build_client(name_or_spec, overrides, use_cache=self.use_cache, prices=prices)


class Estimate(BaseModel):
    """What a --dry-run prints: calls, tokens and cost, live and batch."""

    stage: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    token_method: str
    cost_live_usd: float | None
    cost_batch_usd: float | None
    already_done: int = 0


# --- datasets and run folders -------------------------------------------------------------------


def load_run_dataset(
    run: RunDir, dataset: str | None, data_dir: str | None
) -> tuple[Dataset, dict[str, Any]]:
    """The run's dataset, as given or as its manifest recorded it, plus the manifest entry to record.

    Nothing is written: a command validates all of its inputs before it touches the run folder.
    """
    manifest = run.load_manifest()
    recorded = manifest.get("dataset") or {}
    if dataset is None:
        if not recorded:
            raise RunDirError(
                f"run {run.path} has no dataset yet: pass --dataset SPEC (e.g. sample or llmbar)"
            )
        dataset = recorded["spec"]
        data_dir = data_dir or recorded.get("data_dir")
    loaded = load_dataset(dataset, data_dir=data_dir)
    entry = loaded.manifest_entry()
    entry["data_dir"] = str(Path(data_dir).resolve()) if data_dir else None
    old = recorded.get("checksum")
    if old and old != entry["checksum"]:
        raise RunDirError(
            f"run {run.path} holds dataset '{recorded.get('spec')}' (checksum {old[:12]}); refusing to mix "
            f"in '{entry['spec']}' (checksum {entry['checksum'][:12]}): use a new --run folder"
        )
    return loaded, entry


def open_dataset(run: RunDir, dataset: str | None, data_dir: str | None) -> Dataset:
    """Load the run's dataset and record it in the manifest (creating the run folder)."""
    loaded, entry = load_run_dataset(run, dataset, data_dir)
    run.init(dataset=entry)
    return loaded


def _pick(items: Sequence[Item], subset: str | None, limit: int | None, shown: str) -> list[Item]:
    """--subset then --limit: the same selection in every stage, on the run's whole dataset."""
    chosen = select_subset(list(items), subset, shown=shown) if subset else list(items)
    return chosen[:limit] if limit is not None else chosen


def _require_price(client: ModelClient) -> None:
    """--max-cost can only bound what it can price: refuse an unpriced model up front."""
    if client.prices.price(client.spec.provider, client.spec.model) is None:
        raise ConfigError(
            f"--max-cost cannot bound {client.spec.text}: it has no price in configs/prices.toml "
            "(add one, or run without --max-cost)"
        )


def _run_async(coro: Any) -> Any:
    return asyncio.run(coro)


# --- translate ----------------------------------------------------------------------------------


@dataclass
class TranslateResult:
    outcome: TranslateOutcome | None
    imported: int
    audit_summary: dict[str, object]
    flags: int
    estimate: Estimate | None = None
    # imported lines left out because their item or condition was not selected
    skipped_variants: int = 0


def translate(
    run_dir: str | Path,
    *,
    dataset: str | None = None,
    data_dir: str | None = None,
    translator: str = "local",
    conditions: str | Sequence[str] | None = None,
    variants_file: str | Path | None = None,
    limit: int | None = None,
    subset: str | None = None,
    dry_run: bool = False,
    options: CallOptions | None = None,
    settings: TranslatorSettings | None = None,
    execution: Execution | None = None,
    max_cost: float | None = None,
) -> TranslateResult:
    """Make (or import) the zh/ls/... variants of the run's items and audit them.

    With `execution.batch` every call goes through the provider's Batch API in rounds (a re-ask or a
    piece depends on an earlier answer); `max_cost` stops scheduling paid calls at the budget."""
    options = options or CallOptions()
    settings = settings or TranslatorSettings()
    run = RunDir(run_dir)
    # validate every input before the run folder is created or changed
    ds, entry = load_run_dataset(run, dataset, data_dir)
    chosen = select_conditions(
        conditions if isinstance(conditions, str) or conditions is None else list(conditions)
    )
    items = _pick(ds.items, subset, limit, ds.spec)
    by_id = ds.by_id()
    variants: list[Variant] = []
    skipped = 0
    if variants_file is not None:
        variants = load_variants_file(variants_file, by_id, [c.name for c in load_conditions().values()])
        wanted = {i.id for i in items}
        names = {c.name for c in chosen}
        kept = [v for v in variants if v.item_id in wanted and v.condition in names]
        skipped = len(variants) - len(kept)
        variants = kept
    if variants_file is None and not traits_of(resolve_judge_full(translator).spec).translates:
        raise ConfigError(
            f"{translator}: this provider only judges, it cannot translate; pass --translator MODEL "
            "(e.g. local) or --variants FILE"
        )
    if dry_run:
        if variants_file is not None:
            return TranslateResult(None, len(variants), {}, 0, skipped_variants=skipped)
        existing = read_variants(run.file(VARIANTS))
        todo = [i for i in items if any((i.id, c.name) not in existing for c in chosen)]
        estimate = estimate_translation(todo, chosen, translator, len(items) - len(todo), settings)
        return TranslateResult(None, 0, {}, 0, estimate=estimate)
    client = None if variants_file is not None else options.client(translator, PriceTable.load())
    mode = execution or Execution()
    if client is not None and mode.batch:
        from judgebench.batch import refusal

        why = refusal(client)
        if why:
            raise ConfigError(why)
    if client is not None and max_cost is not None:
        from judgebench.models.client import Budget

        _require_price(client)
        client.budget = Budget(max_cost_usd=max_cost)
    run.init(dataset=entry)
    imported = 0
    outcome: TranslateOutcome | None = None
    if client is None:
        import_variants(run, variants)
        imported = len(variants)
        translator_name = f"import:{Path(str(variants_file)).name}"
    else:
        translator_name = client.name

        async def go() -> TranslateOutcome:
            try:
                existing = read_variants(run.file(VARIANTS))
                pending = sum(1 for i in items if any((i.id, c.name) not in existing for c in chosen))
                if mode.batch:
                    return await _translate_by_batch(run, items, chosen, client, settings, mode)
                with ProgressReporter(pending, f"translate {client.name}", enabled=options.progress) as bar:
                    return await translate_items(run, items, chosen, client, settings, progress=bar)
            finally:
                await client.aclose()

        outcome = _run_async(go())
    flags, summary = write_audit(run, by_id, chosen)
    # every condition the run now holds variants for (a later `--conditions ja` adds, never replaces)
    held = {v.condition for v in read_variants(run.file(VARIANTS)).values()}
    known = load_conditions()
    run.record_stage(
        "translate",
        {
            "translator": translator_name,
            # in the configured order (zh before ls): the report names pairs zh->ls from it
            "conditions": [cond.model_dump() for name, cond in known.items() if name in held],
            "last_conditions": [c.name for c in chosen],
            "subset": subset,
            "skipped_variants": skipped,
            "limit": limit,
            "imported": imported,
            "outcome": outcome.model_dump() if outcome else None,
            "audit": summary,
            "settings": settings.__dict__,
        },
    )
    return TranslateResult(outcome, imported, summary, len(flags))


async def _translate_by_batch(
    run: RunDir,
    items: Sequence[Item],
    conditions: Sequence[Condition],
    client: ModelClient,
    settings: TranslatorSettings,
    mode: Execution,
) -> TranslateOutcome:
    """Translate through the Batch API: each round submits what the stage could not answer from the
    cache; the last pass (all answers stored) writes the records. Totals come from the client."""
    from judgebench.batch import batch_rounds
    from judgebench.translate.stage import prune_failures

    def complete() -> set[str]:
        held = read_variants(run.file(VARIANTS))
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


def estimate_translation(
    items: Sequence[Item],
    conditions: Sequence[Condition],
    translator: str,
    done: int,
    settings: TranslatorSettings | None = None,
) -> Estimate:
    """Calls and tokens of translating `items` when every answer is valid (re-asks not counted)."""
    settings = settings or TranslatorSettings()
    spec, _, _ = resolve_judge(translator)
    prices = PriceTable.load()
    calls = 0
    tokens_in = 0
    tokens_out = 0
    method = "heuristic"
    for item in items:
        for messages in planned_messages(item, conditions, settings):
            calls += 1
            n, method = estimate_tokens_with_method("\n".join(m.content for m in messages), spec)
            tokens_in += n
        body = item.instruction + item.output_1 + item.output_2
        # a CJK rendering of English text takes about as many tokens as the source; +20% for JSON
        tokens_out += int(estimate_tokens_with_method(body, spec)[0] * len(conditions) * 1.2)
    return _estimate("translate", spec.text, calls, tokens_in, tokens_out, method, prices, done)


def _estimate(
    stage: str, model: str, calls: int, tin: int, tout: int, method: str, prices: PriceTable, done: int
) -> Estimate:
    from judgebench.models.registry import ModelSpec
    from judgebench.records import Usage

    spec = ModelSpec.parse(model)
    usage = Usage(input_tokens=tin, output_tokens=tout)
    return Estimate(
        stage=stage,
        model=model,
        calls=calls,
        input_tokens=tin,
        output_tokens=tout,
        token_method=method,
        cost_live_usd=prices.cost(spec.provider, spec.model, usage),
        cost_batch_usd=prices.cost(spec.provider, spec.model, usage, batch=True),
        already_done=done,
    )


# --- judge --------------------------------------------------------------------------------------


@dataclass
class JudgeResult:
    outcomes: dict[str, JudgeOutcome] = field(default_factory=dict)
    planned: int = 0
    notes: list[str] = field(default_factory=list)
    estimates: list[Estimate] = field(default_factory=list)


# A judge's answer is a short JSON object; the reply budget is an upper bound, not an estimate.
JUDGE_OUTPUT_TOKENS_ESTIMATE = 80


def _judge_plan(
    run: RunDir,
    judges: Sequence[str],
    conditions: str | Sequence[str] | None,
    tie_probes: bool,
    limit: int | None,
    subset: str | None,
    dataset: str | None,
    data_dir: str | None,
) -> tuple[list[PlannedCall], list[str], dict[str, Any]]:
    """The plan and the dataset's manifest entry; reads only, so bad input leaves the run as it was."""
    manifest = run.load_manifest()
    translated = manifest.get("stages", {}).get("translate")
    if dataset is None and not manifest.get("dataset"):
        raise RunDirError(
            f"run {run.path} has no dataset: run `judgebench translate` first, or pass --dataset"
        )
    ds, entry = load_run_dataset(run, dataset, data_dir)
    items = _pick(ds.items, subset, limit, ds.spec)
    if isinstance(conditions, str):
        wanted = [c.strip() for c in conditions.split(",") if c.strip()]
        if not wanted:
            raise ConfigError(
                f"run {run.path}: --conditions '{conditions}' names no condition; e.g. --conditions en,zh,ls"
            )
    elif conditions:
        wanted = list(conditions)
    elif translated:
        wanted = [SOURCE] + [c["name"] for c in translated.get("conditions", [])]
    else:
        wanted = [SOURCE]
    others = [w for w in wanted if w != SOURCE]
    targets = select_conditions(others) if others else []
    variants = read_variants(run.file(VARIANTS))
    if targets and not variants:
        raise RunDirError(
            f"run {run.path} has no variants for {', '.join(c.name for c in targets)}: "
            "run `judgebench translate` first"
        )
    calls, notes = plan_calls(
        items, variants, targets, judges, include_source=SOURCE in wanted, tie_probes=tie_probes
    )
    if not calls:
        more = f" and {len(notes) - 1} more like it" if len(notes) > 1 else ""
        why = f": {notes[0]}{more}" if notes else ""
        raise ConfigError(f"run {run.path}: nothing to judge for conditions {', '.join(wanted)}{why}")
    return calls, notes, entry


def judge(
    run_dir: str | Path,
    *,
    models: Sequence[str] = ("local",),
    dataset: str | None = None,
    data_dir: str | None = None,
    template_path: str | Path | None = None,
    conditions: str | Sequence[str] | None = None,
    tie_probes: bool = True,
    limit: int | None = None,
    subset: str | None = None,
    dry_run: bool = False,
    options: CallOptions | None = None,
    execution: Execution | None = None,
    max_cost: float | None = None,
) -> JudgeResult:
    """Judge every planned (item, condition, order) and tie-probe for each model; resumable.

    `execution` chooses live calls, the provider Batch API, a vLLM batch file to write, or a batch
    output to import; `max_cost` (USD, shared by all judges) stops scheduling paid calls before the
    budget would be exceeded, leaving a resumable run."""
    if not models:
        raise ConfigError("no judge given: pass --model PROVIDER:MODEL (e.g. local or openai:gpt-4.1-mini)")
    if len(set(models)) != len(models):
        raise ConfigError("the same --model is given twice")
    options = options or CallOptions()
    run = RunDir(run_dir)
    template = load_template(template_path)
    plan, notes, entry = _judge_plan(run, models, conditions, tie_probes, limit, subset, dataset, data_dir)
    prices = PriceTable.load()
    if dry_run:
        return JudgeResult(
            planned=len(plan),
            notes=notes,
            estimates=estimate_judging(run, plan, template, models, options, prices),
        )
    execution = execution or Execution()
    if execution.import_file is not None and not Path(execution.import_file).is_file():
        raise InputError("--import-batch: not a file", path=str(execution.import_file))
    clients = {name: options.client(name, prices) for name in models}
    if execution.batch or execution.write_requests or execution.import_file:
        from judgebench.batch import refusal

        for client in clients.values():
            why = refusal(client) if execution.batch else None
            if why:
                raise ConfigError(why)
    if max_cost is not None:
        from judgebench.models.client import Budget

        budget = Budget(max_cost_usd=max_cost)
        for client in clients.values():
            _require_price(client)
            client.budget = budget
    run.init(dataset=entry)
    # records name the judge by what the user typed; a config name resolves to its spec
    for name, client in clients.items():
        client.name = name
    # per-judge request defaults from configs/judges.toml (temperature, max_tokens)
    defaults = {name: resolve_judge_full(name).request_defaults for name in models}
    done = existing_judgments(run.file(JUDGMENTS))
    total = len(pending_calls(plan, done))

    async def go() -> dict[str, JudgeOutcome]:
        try:
            label = ", ".join(models)
            with ProgressReporter(total, f"judge {label}", enabled=options.progress) as bar:
                return await execute_plan(
                    plan,
                    clients,
                    template,
                    run.file(JUDGMENTS),
                    progress=bar,
                    request_defaults=defaults,
                    execution=execution,
                )
        finally:
            for client in clients.values():
                await client.aclose()

    outcomes: dict[str, JudgeOutcome] = _run_async(go())
    stages = run.load_manifest().get("stages", {})
    previous = stages.get("judge", {}).get("judges", {})
    judges_entry = dict(previous)
    for name, client in clients.items():
        judges_entry[name] = {
            "spec": client.spec.text,
            "settings": client.settings.model_dump(),
            "outcome": outcomes[name].model_dump(),
            "stats": client.stats.model_dump(),
        }
    run.record_stage(
        "judge",
        {
            "judges": judges_entry,
            "template": {
                "name": template.name,
                "hash": template.digest(),
                "path": str(template_path or "default"),
                "tell_condition": template.tell_condition,
            },
            "conditions": sorted({c.condition for c in plan if c.kind == "pair"}),
            "tie_probes": tie_probes,
            "planned": len(plan),
            "notes": notes,
            "mode": "write-batch-file"
            if execution.write_requests
            else "import-batch"
            if execution.import_file
            else "batch"
            if execution.batch
            else "live",
            "max_cost_usd": max_cost,
        },
    )
    return JudgeResult(outcomes=outcomes, planned=len(plan), notes=notes)


def estimate_judging(
    run: RunDir,
    plan: Sequence[PlannedCall],
    template: JudgeTemplate,
    models: Sequence[str],
    options: CallOptions,
    prices: PriceTable,
) -> list[Estimate]:
    done = existing_judgments(run.file(JUDGMENTS))
    todo = pending_calls(plan, done)
    out: list[Estimate] = []
    for name in models:
        spec, _, _ = resolve_judge(name)
        mine = [c for c in todo if c.judge == name]
        tokens_in = 0
        method = "heuristic"
        for call in mine:
            request: ModelRequest = template.render(
                instruction=call.instruction,
                output_a=call.output_a,
                output_b=call.output_b,
                language=call.language,
                completion=traits_of(spec).completion_only,
            )
            text = request.prompt or "\n".join(m.content for m in request.messages or [])
            n, method = estimate_tokens_with_method(text, spec)
            tokens_in += n
        estimate = _estimate(
            "judge",
            spec.text,
            len(mine),
            tokens_in,
            JUDGE_OUTPUT_TOKENS_ESTIMATE * len(mine),
            method,
            prices,
            sum(1 for c in plan if c.judge == name) - len(mine),
        )
        estimate.model = name
        out.append(estimate)
    return out


__all__ = [
    "CallOptions",
    "Estimate",
    "JudgeResult",
    "TranslateResult",
    "judge",
    "open_dataset",
    "translate",
]


# --- report -------------------------------------------------------------------------------------


def report(run_dir: str | Path, settings: Any = None, *, html: bool = True, console: Any = None) -> Any:
    """Compute every metric of the run's judgments and write metrics.json/.csv, report.md/.html."""
    from judgebench.analysis import ReportSettings, analyze_run
    from judgebench.report.writer import write_report

    run = RunDir(run_dir)
    run.require(JUDGMENTS, "run `judgebench judge` (or `judgebench import llmbar-results`) first")
    analysis = analyze_run(run, settings or ReportSettings())
    paths = write_report(run, analysis, console, html=html)
    run.record_stage("report", {"settings": analysis.settings.model_dump(), "metrics": len(analysis.records)})
    return analysis, paths


# --- bbe ----------------------------------------------------------------------------------------


def bbe_run(
    run_dir: str | Path,
    *,
    tau: float = 0.5,
    delta: float = 0.01,
    seed: int = 0,
    verify: int | None = None,
    alpha: float | None = None,
) -> Any:
    """A-BB on a Judge-LS run; writes RUN/bbe.json and its plot. `alpha=None` (auto shrinkage) is
    this step's default in the pipeline: judges flip between languages far more than tau allows
    unshrunk (Delta 0.3-0.6 against 0.035), so alpha 1 would only ever report "infeasible"."""
    from judgebench.bbe.api import bbe_from_run, default_out, write_outputs
    from judgebench.bbe.engine import BBEParams

    path = Path(run_dir)
    result = bbe_from_run(path, BBEParams(tau=tau, delta=delta, seed=seed, verify=verify, alpha=alpha))
    write_outputs(result, default_out(run=path, scores=None, arena=None), plot=True)
    return result.result


# --- the whole pipeline -------------------------------------------------------------------------


@dataclass
class PipelineResult:
    run_dir: Path
    translate: TranslateResult | None = None
    judge: JudgeResult | None = None
    report_html: Path | None = None
    bbe: Any = None
    estimates: list[Estimate] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def default_run_dir(dataset: str) -> Path:
    import datetime as dt

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = "".join(ch if ch.isalnum() else "-" for ch in Path(dataset).stem)[:40]
    return Path("runs") / f"{stamp}-{slug}"


def _has_variants(path: Path) -> bool:
    variants = RunDir(path).file(VARIANTS)
    return variants.is_file() and bool(read_variants(variants))


def _pipeline_judge_estimates(
    path: Path,
    models: Sequence[str],
    dataset: str,
    data_dir: str | None,
    conditions: str,
    limit: int | None,
    options: CallOptions,
    *,
    translated: bool,
) -> list[Estimate]:
    """The judge calls `run` will still make, per judge, before it has made any.

    A run that holds its variants is planned exactly (every condition and the tie-probes, pending
    calls only). Before translation only `en` can be planned: the whole study is the en plan of a
    fresh run times (2 orders x conditions + 2 tie-probes) / 2 per item, less the en calls this run
    already holds (with no variants, nothing else can have been judged yet)."""
    if translated:
        return judge(path, models=models, limit=limit, dry_run=True, options=options).estimates
    per_item = 2 * (1 + len([c for c in conditions.split(",") if c.strip()])) + 2
    done: dict[str, int] = {}
    if path.exists():
        for est in judge(
            path, models=models, dataset=dataset, data_dir=data_dir, conditions="en", limit=limit,
            dry_run=True, tie_probes=False, options=options,
        ).estimates:  # fmt: skip
            done[est.model] = est.already_done
    with tempfile.TemporaryDirectory(prefix="jb-estimate-") as tmp:
        whole_en = judge(
            Path(tmp) / "fresh", models=models, dataset=dataset, data_dir=data_dir, conditions="en",
            limit=limit, dry_run=True, tie_probes=False, options=options,
        ).estimates  # fmt: skip
    for est in whole_en:
        total = int(est.calls * per_item / 2)
        pending = max(0, total - done.get(est.model, 0))
        share = pending / est.calls if est.calls else 0.0
        est.calls, est.already_done = pending, total - pending
        est.input_tokens = int(est.input_tokens * share)
        est.output_tokens = int(est.output_tokens * share)
        est.cost_live_usd = None if est.cost_live_usd is None else est.cost_live_usd * share
        est.cost_batch_usd = None if est.cost_batch_usd is None else est.cost_batch_usd * share
    return whole_en


def run_pipeline(
    run_dir: str | Path | None = None,
    *,
    dataset: str = "sample",
    data_dir: str | None = None,
    models: Sequence[str] = ("local",),
    translator: str | None = None,
    machine_translate: bool = False,
    conditions: str = "zh,ls",
    limit: int | None = None,
    confirm: Any = None,
    options: CallOptions | None = None,
    tau: float = 0.5,
    delta: float = 0.01,
    execution: Execution | None = None,
    max_cost: float | None = None,
    template_path: str | Path | None = None,
    dry_run: bool = False,
) -> PipelineResult:
    """translate -> judge -> bbe -> report (bbe reads only the judgments, so the report can show it). The
    offline default needs no machine translation unless `machine_translate` is set. Before any paid
    call, `confirm(estimates)` must return True (the CLI asks; --yes skips). `dry_run` stops after
    the estimates of the whole study: nothing is called and no run folder is made."""
    import time

    from judgebench.data.dataset import sample_variants_path

    options = options or CallOptions()
    path = Path(run_dir) if run_dir else default_run_dir(dataset)
    result = PipelineResult(run_dir=path)
    use_bundled = dataset == "sample" and not machine_translate
    translator = translator or models[0]
    if not use_bundled:
        est = translate(
            path,
            dataset=dataset,
            data_dir=data_dir,
            translator=translator,
            conditions=conditions,
            limit=limit,
            dry_run=True,
            options=options,
        ).estimate
        if est is not None:
            result.estimates.append(est)
    result.estimates += _pipeline_judge_estimates(
        path, models, dataset, data_dir, conditions, limit, options, translated=_has_variants(path)
    )
    if dry_run:
        return result
    paid = [e for e in result.estimates if e.cost_live_usd is None or e.cost_live_usd > 0]
    if paid and confirm is not None and not confirm(result.estimates):
        raise ConfigError("stopped before spending anything (rerun with --yes to skip the question)")
    clock = time.perf_counter()
    if use_bundled:
        result.translate = translate(
            path, dataset=dataset, variants_file=sample_variants_path(), conditions=conditions, limit=limit
        )
    else:
        result.translate = translate(
            path,
            dataset=dataset,
            data_dir=data_dir,
            translator=translator,
            conditions=conditions,
            limit=limit,
            options=options,
            execution=execution,
            max_cost=max_cost,
        )
    result.seconds["translate"] = time.perf_counter() - clock
    clock = time.perf_counter()
    spent = result.translate.outcome.cost_usd if result.translate and result.translate.outcome else 0.0
    result.judge = judge(
        path,
        models=models,
        limit=limit,
        options=options,
        template_path=template_path,
        execution=execution,
        max_cost=None if max_cost is None else max(0.0, max_cost - spent),
    )
    result.seconds["judge"] = time.perf_counter() - clock
    # bbe reads only the judgments; it runs before the report so that report.html shows its rankings
    clock = time.perf_counter()
    try:
        result.bbe = bbe_run(path, tau=tau, delta=delta)
    except JudgebenchError as exc:  # e.g. no judge with a valid verdict: the report stands without it
        result.bbe = str(exc)
    result.seconds["bbe"] = time.perf_counter() - clock
    clock = time.perf_counter()
    _, paths = report(path)
    result.report_html = paths.report_html
    result.seconds["report"] = time.perf_counter() - clock
    return result
