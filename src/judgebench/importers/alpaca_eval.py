"""AlpacaEval annotations (`results/<model>/<annotator>/annotations.json` of tatsu-lab/alpaca_eval): a
JSON array with one record per instruction: `instruction`, `output_1` (the baseline's), `generator_1`,
`output_2`, `generator_2`, `annotator` and `preference` (1 = output_1 better, 2 = output_2, 1.5 or 0 a
draw; weighted annotators give a probability-like value between 1 and 2; null when the annotator gave
none). AlpacaEval shuffles the order it shows and stores the preference mapped back, so the shown order
is unknown: every judgment is one `orig` call and position metrics do not apply.

`--human FILE` takes cross-annotations in the same shape (AlpacaFarm's human cross-annotations:
`instruction`, `output_1`, `output_2`, `preference`, `annotator_index`), joined on the three texts. The
headline is AlpacaEval's win rate of generator_2 (`metrics/winrate.get_winrate`): the mean of
preference - 1, and the discrete win rate (each preference rounded, a draw counting half).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgebench.importers.importer_registry import Importer, ImportOptions
from judgebench.importers.log import (
    Headline,
    HumanRow,
    ImportedLog,
    SourceLine,
    pair_judgment,
    read_records,
    sha256_of,
)
from judgebench.records import Item, Winner


def preference(line: SourceLine) -> float | None:
    """The record's preference as a number in [1, 2] (0 -> 1.5, a draw); None for none."""
    value: Any = line.obj().get("preference")
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise line.error(f"'preference' must be a number, got {value!r}", field="preference") from None
    if math.isnan(number):
        return None
    number = 1.5 if number == 0 else number
    if not 1 <= number <= 2:
        raise line.error(f"'preference' must be 0 or between 1 and 2, got {value!r}", field="preference")
    return number


def verdict_of(pref: float) -> Winner:
    return "Tie" if pref == 1.5 else "A" if pref < 1.5 else "B"


def _key(instruction: str, output_1: str, output_2: str) -> str:
    return hashlib.sha256("\x00".join((instruction, output_1, output_2)).encode()).hexdigest()[:16]


def _item(line: SourceLine) -> Item:
    data = line.obj()
    instruction, out_1, out_2 = (line.text_field(n) for n in ("instruction", "output_1", "output_2"))
    gen_1, gen_2 = str(data.get("generator_1") or "output_1"), str(data.get("generator_2") or "output_2")
    return Item(
        id=f"{gen_2}/{_key(instruction, out_1, out_2)}",
        subset=str(data.get("dataset") or "default"),
        instruction=instruction,
        output_1=out_1,
        output_2=out_2,
        metadata={"model_1": gen_1, "model_2": gen_2},
    )


def _human(paths: Sequence[Path], log: ImportedLog, by_texts: dict[str, Item]) -> None:
    unmatched = 0
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        for line in read_records(path):
            texts = (line.text_field(n) for n in ("instruction", "output_1", "output_2"))
            item = by_texts.get(_key(*texts))
            pref = preference(line)
            if item is None or pref is None:
                unmatched += 1
                continue
            letter = verdict_of(pref)
            label = "tie" if letter == "Tie" else "1" if letter == "A" else "2"
            annotator = line.obj().get("annotator_index", line.obj().get("annotator", ""))
            log.human.append(HumanRow(item.id, label, annotator=str(annotator)))
    if unmatched:
        log.notes.append(
            f"{unmatched} human annotations match no imported item or have no preference (left out)"
        )


def win_rates(prefs: Sequence[float]) -> tuple[float | None, float | None]:
    """(win rate, discrete win rate) of generator_2 as AlpacaEval computes them, as fractions."""
    if not prefs:
        return None, None
    weighted = sum(p - 1 for p in prefs) / len(prefs)
    discrete = [0.5 if p == 1.5 else float(round(p) - 1) for p in prefs]
    return weighted, sum(discrete) / len(discrete)


def read(paths: Sequence[Path], options: ImportOptions) -> ImportedLog:
    log = ImportedLog(format="alpaca-eval")
    seen: dict[str, Item] = {}
    by_texts: dict[str, Item] = {}
    prefs: dict[tuple[str, str], list[float]] = {}
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        for line in read_records(path):
            item = log.add_item(_item(line), seen, line)
            by_texts[item.id.rsplit("/", 1)[1]] = item
            judge = options.judge or str(line.obj().get("annotator") or path.parent.name)
            pref = preference(line)
            raw = line.obj().get("raw_completion")
            raw_text = raw if isinstance(raw, str) else None
            if pref is None:
                log.judgments.append(
                    pair_judgment(
                        judge, item, "orig", "invalid", line, raw=raw_text, parse_error="no preference"
                    )
                )
                continue
            prefs.setdefault((judge, str(item.metadata["model_2"])), []).append(pref)
            log.judgments.append(
                pair_judgment(
                    judge, item, "orig", verdict_of(pref), line, raw=raw_text, extra={"preference": pref}
                )
            )
    _human(options.human, log, by_texts)
    log.notes.append(
        "AlpacaEval stores no shown order: each record is one `orig` judgment, so position metrics do not "
        "apply and `Raw A %` reads as the share that picked output_1 (the baseline)"
    )
    rule = "metrics/winrate.get_winrate: mean(preference - 1); discrete: rounded, draws half"
    for (judge, model), values in prefs.items():
        weighted, discrete = win_rates(values)
        log.headlines.append(
            Headline(judge, "alpaca_eval_win_rate", weighted, len(values), "all", rule, model)
        )
        log.headlines.append(
            Headline(judge, "alpaca_eval_discrete_win_rate", discrete, len(values), "all", rule, model)
        )
    return log


IMPORTER = Importer(
    name="alpaca-eval",
    summary=(
        "AlpacaEval annotations.json (a preference per instruction and annotator); "
        "--human joins cross-annotations"
    ),
    read=read,
    takes_human=True,
)
