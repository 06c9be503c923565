"""JudgeBench outputs (ScalerLab/JudgeBench `outputs/*.jsonl`): one pair a line with `pair_id`, `source`,
`question`, `response_A`, `response_B`, `label` (`A>B`/`B>A`), `response_model` and `judgments`, whose
first entry judged (A, B) and second (B, A) (`run_judge.py`); each entry's `decision` is `A>B`, `B>A`,
`A=B` or null, and a failed call is a null entry.

The headline is JudgeBench's own score (`utils/metrics.py`): the second decision is flipped back, each
decision that matches the label counts +1 and each that names the other answer -1, a pair is correct
when the sum is positive, and the score is correct pairs over all pairs (ties and nulls count against),
per source family and overall.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgebench.importers.importer_registry import Importer, ImportOptions
from judgebench.importers.log import Headline, ImportedLog, SourceLine, pair_judgment, read_records, sha256_of
from judgebench.records import Item, Winner

FAMILIES = ("mmlu-pro", "livebench-reasoning", "livebench-math", "livecodebench")
_LETTERS: dict[str, Winner] = {"A>B": "A", "A>>B": "A", "B>A": "B", "B>>A": "B", "A=B": "Tie", "B=A": "Tie"}
_FILE_JUDGE = re.compile(r"judge_name=([^,]+),judge_model=(.+)\.jsonl$")


def subset_of(source: str) -> str:
    """`mmlu-pro-health` -> `mmlu-pro/health`; a source outside the four families stays as it is."""
    for family in FAMILIES:
        if source == family:
            return family
        if source.startswith(family + "-"):
            return f"{family}/{source[len(family) + 1 :]}"
    return source or "default"


def judge_name(path: Path, first: SourceLine, options: ImportOptions) -> str:
    if options.judge:
        return options.judge
    match = _FILE_JUDGE.search(path.name)
    if match:
        return f"{match.group(1)}/{match.group(2)}"
    name = first.obj().get("judge_name")
    return str(name) if name else path.stem


def _decision(entry: Any, where: SourceLine, index: int) -> tuple[Winner | None, str | None, str | None]:
    """(letter, raw text, parse error) of one `judgments` entry; a null entry is a failed call."""
    if entry is None:
        return None, None, "no judgment in the source (the call failed)"
    if not isinstance(entry, dict) or "decision" not in entry:
        raise where.error(f"judgments[{index}] must be an object with 'decision' or null", field="judgments")
    raw = json.dumps(entry.get("judgment"), ensure_ascii=False, default=str)
    decision = entry.get("decision")
    if decision is None:
        return "invalid", raw, "null decision in the source"
    letter = _LETTERS.get(str(decision).replace(" ", ""))
    if letter is None:
        return "invalid", raw, f"unknown decision {decision!r}"
    return letter, raw, None


def _item(line: SourceLine) -> Item:
    data = line.obj()
    label = data.get("label")
    if label not in ("A>B", "B>A"):
        raise line.error(f"'label' must be A>B or B>A, got {label!r}", field="label")
    pair_id = data.get("pair_id")
    if not isinstance(pair_id, str | int) or not str(pair_id).strip():
        raise line.error("'pair_id' is missing", field="pair_id")
    source = data.get("source")
    model = data.get("response_model")
    metadata: dict[str, Any] = {"source": source, "original_id": data.get("original_id")}
    if isinstance(model, str) and model:
        metadata.update(chosen_model=model, rejected_model=model)
    return Item(
        id=str(pair_id),
        subset=subset_of(str(source or "")),
        instruction=line.text_field("question"),
        output_1=line.text_field("response_A"),
        output_2=line.text_field("response_B"),
        label=1 if label == "A>B" else 2,
        metadata=metadata,
    )


def _flip(decision: str | None) -> str | None:
    return {"A>B": "B>A", "B>A": "A>B"}.get(decision or "", decision)


def score(pairs: Sequence[tuple[str, list[str | None]]]) -> float | None:
    """JudgeBench's score of (label, decisions) pairs as its `compute_final_metrics` computes it."""
    if not pairs:
        return None
    correct = 0
    for label, decisions in pairs:
        if len(decisions) == 1:
            correct += decisions[0] == label
            continue
        counter = 0
        for decision in (decisions[0], _flip(decisions[1])):
            counter += 1 if decision == label else -1 if decision == _flip(label) else 0
        correct += counter > 0
    return correct / len(pairs)


def _headlines(judge: str, scored: list[tuple[str, str, list[str | None]]]) -> list[Headline]:
    out = []
    rule = "two-order vote (JudgeBench utils/metrics.py): sum of +1/-1 per order > 0"
    for family in (*FAMILIES, ""):
        chosen = [(label, d) for source, label, d in scored if source.startswith(family)]
        if chosen:
            out.append(Headline(judge, "judgebench_score", score(chosen), len(chosen), family or "all", rule))
    return out


def read(paths: Sequence[Path], options: ImportOptions) -> ImportedLog:
    log = ImportedLog(format="judgebench")
    seen: dict[str, Item] = {}
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        scored: list[tuple[str, str, list[str | None]]] = []
        judge: str | None = None
        for line in read_records(path):
            judge = judge or judge_name(path, line, options)
            item = log.add_item(_item(line), seen, line)
            entries = line.obj().get("judgments")
            if not isinstance(entries, list) or not 1 <= len(entries) <= 2:
                raise line.error("'judgments' must be a list of one or two entries", field="judgments")
            decisions: list[str | None] = []
            for index, (entry, order) in enumerate(zip(entries, ("orig", "swap"), strict=False)):
                letter, raw, problem = _decision(entry, line, index)
                log.judgments.append(
                    pair_judgment(judge, item, order, letter, line, raw=raw, parse_error=problem)
                )
                decisions.append(entry.get("decision") if isinstance(entry, dict) else None)
            scored.append((str(line.obj().get("source") or ""), str(line.obj()["label"]), decisions))
        if judge is not None:
            log.headlines.extend(_headlines(judge, scored))
    return log


IMPORTER = Importer(
    name="judgebench",
    summary="JudgeBench outputs/*.jsonl (pair_id, label A>B/B>A, two judgments, the second swapped)",
    read=read,
)
