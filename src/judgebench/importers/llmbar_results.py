"""LLMBar's published per-item verdicts (`result.json`) read as judgments, so `report` runs on them.

Why: LLMBar publishes both the verdicts and the statistics computed from them, which makes them a
golden fixture for the metric code and lets users compare their judges with GPT-4 / ChatGPT on the
same items without spending a call.

Format (LLMBar's README): each result.json is the subset's dataset.json with a `results`
list whose last element is `{"swap = False": {"completion": [text, finish], "winner": "1"|"2"|null},
"swap = True": {...}}`; the swapped winner is already mapped back to the original numbering. So the
verdict is the winner itself, and the letter the judge saw is reconstructed: orig 1 -> A, 2 -> B;
swap 1 -> B, 2 -> A. A null winner is an answer without a readable verdict: `invalid`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgebench.data.dataset import Dataset, load_dataset
from judgebench.data.llmbar import LLMBAR_SUBSETS, llmbar_root
from judgebench.errors import ConfigError, InputError
from judgebench.importers.importer_registry import Importer, ImportOptions
from judgebench.importers.log import ImportedLog, sha256_of
from judgebench.outside import loads
from judgebench.records import Item, Judgment, Winner
from judgebench.records.clock import now_iso

ORDERS = (("swap = False", "orig"), ("swap = True", "swap"))
LETTER = {("orig", "1"): "A", ("orig", "2"): "B", ("swap", "1"): "B", ("swap", "2"): "A"}


@dataclass
class ImportSummary:
    """What an import added: judgments per subset, invalid verdicts, files read and subsets without one."""

    judge: str
    judgments: int = 0
    appended: int = 0
    invalid: int = 0
    subsets: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    missing_subsets: list[str] = field(default_factory=list)


def result_path(root: Path, subset: str, evaluator: str) -> Path:
    """`Dataset/LLMBar/<subset>/evaluators/<evaluator>/result.json` under the LLMBar root."""
    return root / "Dataset" / "LLMBar" / subset / "evaluators" / evaluator / "result.json"


def available_evaluators(root: Path) -> list[str]:
    """Evaluator/strategy names that have a published result.json somewhere in LLMBar."""
    found = set()
    for path in (root / "Dataset" / "LLMBar").glob("**/evaluators/*/*/result.json"):
        found.add(f"{path.parent.parent.name}/{path.parent.name}")
    return sorted(found)


def _read_results(path: Path) -> list[dict[str, Any]]:
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg} (column {exc.colno})", path=str(path), line=exc.lineno
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"not a readable result.json ({exc})", path=str(path)) from None
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise InputError("result.json must be a JSON array of objects", path=str(path))
    return data


def _judgments(entry: dict[str, Any], item: Item, evaluator: str, path: Path, index: int) -> list[Judgment]:
    results = entry.get("results")
    if not isinstance(results, list) or not results or not isinstance(results[-1], dict):
        raise InputError("no `results` list", path=str(path), item=item.id)
    if entry.get("label") != item.label or entry.get("output_1") != item.output_1:
        raise InputError(
            f"entry {index} does not match dataset item {item.id} (label or output_1 differs): "
            "result.json and dataset.json come from different versions",
            path=str(path),
            item=item.id,
        )
    last = results[-1]
    out = []
    for key, order in ORDERS:
        answer = last.get(key)
        if not isinstance(answer, dict) or "winner" not in answer:
            raise InputError(f"no '{key}' answer", path=str(path), item=item.id)
        completion = answer.get("completion")
        raw = completion[0] if isinstance(completion, list) and completion else None
        winner_raw = answer.get("winner")
        winner: Winner
        if winner_raw is None:
            winner, verdict, parse_error = "invalid", "invalid", "null winner in result.json"
        elif str(winner_raw) in ("1", "2"):
            verdict = str(winner_raw)
            winner = "A" if LETTER[(order, verdict)] == "A" else "B"
            parse_error = None
        else:
            raise InputError(f"unexpected winner {winner_raw!r} in '{key}'", path=str(path), item=item.id)
        out.append(
            Judgment(
                judge=evaluator,
                item_id=item.id,
                subset=item.subset,
                kind="pair",
                condition="en",
                order=order,
                raw=None if raw is None else str(raw),
                winner=winner,
                verdict=verdict,
                parse_error=parse_error,
                label=item.label,
                model=evaluator,
                params={"source": "llmbar:result.json"},
                created_at=now_iso(),
            )
        )
    return out


def published_judgments(
    dataset: Dataset, data_dir: str | Path, evaluator: str
) -> tuple[list[Judgment], ImportSummary]:
    """Every en pair judgment LLMBar published for `evaluator` (e.g. `GPT-4/Vanilla`) on `dataset`
    (LLMBar loaded from `data_dir`), with what was read; an evaluator with no result.json is an error
    that lists the published ones."""
    evaluator = evaluator.strip().strip("/")
    root = llmbar_root(data_dir)
    by_subset: dict[str, list[Item]] = {}
    for item in dataset.items:
        by_subset.setdefault(item.subset, []).append(item)
    summary = ImportSummary(judge=evaluator)
    new: list[Judgment] = []
    for subset in LLMBAR_SUBSETS:
        path = result_path(root, subset, evaluator)
        if not path.is_file():
            summary.missing_subsets.append(subset)
            continue
        items = by_subset.get(subset, [])
        entries = _read_results(path)
        if len(entries) != len(items):
            raise InputError(
                f"{len(entries)} results for {len(items)} dataset items of {subset}", path=str(path)
            )
        for index, (entry, item) in enumerate(zip(entries, items, strict=True)):
            new.extend(_judgments(entry, item, evaluator, path, index))
        summary.files.append(str(path))
        summary.subsets[subset] = 2 * len(items)
    if not summary.files:
        known = available_evaluators(root)
        raise InputError(
            f"no result.json for evaluator '{evaluator}' under {root / 'Dataset' / 'LLMBar'}; "
            f"published: {', '.join(known) if known else 'none'}"
        )
    summary.judgments = len(new)
    summary.invalid = sum(j.verdict == "invalid" for j in new)
    return new, summary


def read(paths: Sequence[Path], options: ImportOptions) -> ImportedLog:
    """The registry's reader: PATH is the LLMBar copy (the folder that holds Dataset/), the evaluator
    `--set evaluator=GPT-4/Vanilla` (or --judge); the run's dataset is LLMBar itself."""
    evaluator = options.setting("evaluator") or options.judge
    if len(paths) != 1 or not evaluator:
        raise ConfigError("llmbar-results reads one LLMBar folder and needs --set evaluator=NAME")
    dataset = load_dataset("llmbar", data_dir=str(paths[0]))
    judgments, summary = published_judgments(dataset, paths[0], evaluator)
    log = ImportedLog(format="llmbar-results", judgments=judgments, dataset=("llmbar", str(paths[0])))
    log.sources = {name: sha256_of(Path(name)) for name in summary.files}
    return log


IMPORTER = Importer(
    name="llmbar-results",
    summary="LLMBar's published per-item verdicts (Dataset/LLMBar/**/evaluators/NAME/result.json)",
    read=read,
    settings={"evaluator": "the published evaluator/strategy, e.g. GPT-4/Vanilla"},
    own_command=True,
)
