"""A generic judgments file, so any in-house pipeline can be audited: JSONL (one object a line) or CSV
(a header row), one judge call a row.

Columns (docs/guides/import.md): `item_id`, `judge`, and the verdict as `verdict` (the output it names:
1, 2 or tie) or `winner` (the letter shown: A, B or tie); `order` (orig/swap) or `first_shown` (1: output_1
shown as A, 2: output_2 shown as A), default orig; the texts `output_1`, `output_2` and `instruction`
(or only `output_1_id`/`output_2_id`, then length metrics skip the item); optional `subset`, `label`
(gold 1/2), `confidence`, `prob_a`/`prob_b`/`prob_tie`, `model_1`/`model_2` (who wrote each output),
`raw` (the judge's text), `human_label` (1/2/tie) with `annotator`. A value it cannot read is an error
naming the file, line and column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from judgebench.errors import InputError
from judgebench.importers.importer_registry import Importer, ImportOptions
from judgebench.importers.log import (
    HumanRow,
    ImportedLog,
    SourceLine,
    gold,
    letter_of,
    pair_judgment,
    read_records,
    sha256_of,
)
from judgebench.records import Item, Winner

_VERDICTS = {"1": "1", "2": "2", "tie": "tie", "1.0": "1", "2.0": "2"}
_LETTERS: dict[str, Winner] = {"a": "A", "b": "B", "tie": "Tie"}
_ORDERS = {"orig": "orig", "swap": "swap", "1": "orig", "2": "swap"}


def _csv_records(path: Path) -> Iterator[SourceLine]:
    text = path.read_text(encoding="utf-8-sig")
    lines = text.splitlines()
    reader = csv.DictReader(io.StringIO(text))
    start = 2
    for row in reader:
        end = reader.line_num
        yield SourceLine(str(path), start, "\n".join(lines[start - 1 : end]), dict(row))
        start = end + 1


def records(path: Path) -> Iterator[SourceLine]:
    if not path.is_file():
        raise InputError("no such file", path=str(path))
    if path.suffix.lower() in (".csv", ".tsv"):
        return _csv_records(path)
    return read_records(path)


def _text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    return None if value is None or str(value).strip() == "" else str(value).strip()


def _number(line: SourceLine, name: str) -> float | None:
    value = _text(line.obj(), name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise line.error(f"'{name}' must be a number, got {value!r}", field=name) from None


def _order(line: SourceLine) -> str:
    data = line.obj()
    given = _text(data, "order") or _text(data, "first_shown") or "orig"
    order = _ORDERS.get(given.lower())
    if order is None:
        raise line.error(f"order must be orig/swap (or first_shown 1/2), got {given!r}", field="order")
    return order


def _letter(line: SourceLine, order: str) -> Winner:
    data = line.obj()
    verdict, winner = _text(data, "verdict"), _text(data, "winner")
    if verdict is not None:
        number = _VERDICTS.get(verdict.lower())
        if number is None:
            raise line.error(f"'verdict' must be 1, 2 or tie, got {verdict!r}", field="verdict")
        return letter_of(order, number)
    if winner is not None:
        letter = _LETTERS.get(winner.lower())
        if letter is None:
            raise line.error(f"'winner' must be A, B or tie, got {winner!r}", field="winner")
        return letter
    raise line.error("no 'verdict' (1/2/tie) or 'winner' (A/B/tie)", field="verdict")


def _item(line: SourceLine) -> Item:
    data = line.obj()
    item_id = _text(data, "item_id")
    if item_id is None:
        raise line.error("'item_id' is missing", field="item_id")
    texts = [_text(data, n) for n in ("output_1", "output_2")]
    ids = [_text(data, n) for n in ("output_1_id", "output_2_id")]
    if None in texts and None in ids:
        raise line.error("give the two texts (output_1, output_2) or their ids (output_1_id, output_2_id)")
    label_text = _text(data, "label")
    label = gold(label_text.removesuffix(".0")) if label_text else None
    if label_text and label is None:
        raise line.error(f"'label' must be 1 or 2, got {label_text!r}", field="label")
    metadata = {k: v for k in ("model_1", "model_2", "output_1_id", "output_2_id") if (v := _text(data, k))}
    if label is not None and "model_1" in metadata and "model_2" in metadata:
        chosen, rejected = (metadata["model_1"], metadata["model_2"])[:: 1 if label == 1 else -1]
        metadata.update(chosen_model=chosen, rejected_model=rejected)
    return Item(
        id=item_id,
        subset=_text(data, "subset") or "default",
        instruction=str(data.get("instruction") or ""),
        output_1=str(data.get("output_1") or ""),
        output_2=str(data.get("output_2") or ""),
        label=label,
        metadata=metadata,
    )


def read(paths: Sequence[Path], options: ImportOptions) -> ImportedLog:
    log = ImportedLog(format="generic")
    seen: dict[str, Item] = {}
    labelled: set[HumanRow] = set()
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        for line in records(path):
            item = log.add_item(_item(line), seen, line)
            data = line.obj()
            judge = options.judge or _text(data, "judge")
            if judge is None:
                raise line.error("'judge' is missing", field="judge")
            order = _order(line)
            judgment = pair_judgment(
                judge, item, order, _letter(line, order), line, raw=_text(data, "raw"),
            )  # fmt: skip
            probs = {f"prob_{k}": _number(line, f"prob_{k}") for k in ("a", "b", "tie")}
            probs["confidence"] = _number(line, "confidence")
            log.judgments.append(judgment.model_copy(update=probs))
            human = _text(data, "human_label")
            if human is not None:
                value = _VERDICTS.get(human.lower())
                if value is None:
                    raise line.error(f"'human_label' must be 1, 2 or tie, got {human!r}", field="human_label")
                row = HumanRow(item.id, value, annotator=_text(data, "annotator") or "")
                if row not in labelled:
                    labelled.add(row)
                    log.human.append(row)
    return log


IMPORTER = Importer(
    name="generic",
    summary="a generic judgments file, JSONL or CSV (item_id, judge, verdict or winner, order, texts, ...)",
    read=read,
)
