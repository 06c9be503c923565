"""MT-Bench pairwise judgments (FastChat `data/mt_bench/model_judgment/gpt-4_pair.jsonl`): one pair a
line with `question_id`, `model_1`, `model_2`, `turn`, `judge` ([model, template]) and two games: game 1
shows model_1 as A, game 2 model_2 as A (`common.play_a_match_pair`); `g1_winner`/`g2_winner` are
already mapped back to `model_1`, `model_2`, `tie` or `error`. The answers are read back from
`g1_user_prompt` (templates pair-v2, pair-math-v1 and their multi-turn forms; turn 2 compares the
second answers).

`--human FILE` joins MT-Bench's human judgments (lmsys/mt_bench_human_judgments, `human` split, or
FastChat's human_judgments.json: `question_id`, `model_a`, `model_b`, `winner` model_a/model_b/tie...,
`judge`, `turn`) as human labels of the matching pairs. The headline is FastChat's agreement
(`compute_agreement.py`): the judge's vote is its winner when both games agree and a tie otherwise (the
MT-Bench paper's convention), compared with every human vote on the same pair and turn, with ties and
without (a pair where either vote is a tie left out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgebench.importers.importer_registry import Importer, ImportOptions
from judgebench.importers.log import (
    Headline,
    HumanRow,
    ImportedLog,
    SourceLine,
    letter_of,
    pair_judgment,
    read_records,
    sha256_of,
)
from judgebench.records import Item

_SINGLE = re.compile(
    r"\[User Question\]\n(?P<q>.*?)\n\n"
    r"(?:\[The Start of Reference Answer\].*?\[The End of Reference Answer\]\n\n)?"
    r"\[The Start of Assistant A's Answer\]\n(?P<a>.*?)\n\[The End of Assistant A's Answer\]\n\n"
    r"\[The Start of Assistant B's Answer\]\n(?P<b>.*?)\n\[The End of Assistant B's Answer\]",
    re.S,
)
_MULTI = re.compile(
    r"<\|The Start of Assistant A's Conversation with User\|>\n\n### User:\n(?P<q1>.*?)\n\n### Assistant A:\n"
    r"(?P<a1>.*?)\n\n### User:\n(?P<q2>.*?)\n\n### Assistant A:\n(?P<a>.*?)\n\n"
    r"<\|The End of Assistant A's Conversation with User\|>.*?### Assistant B:\n.*?### Assistant B:\n"
    r"(?P<b>.*?)\n\n<\|The End of Assistant B's Conversation with User\|>",
    re.S,
)
_WINNERS = {"model_1": "1", "model_2": "2", "tie": "tie"}


def _texts(line: SourceLine) -> tuple[str, str, str]:
    prompt = line.obj().get("g1_user_prompt")
    text = prompt if isinstance(prompt, str) else ""
    multi = _MULTI.search(text)
    if multi:
        return f"{multi.group('q1')}\n\n{multi.group('q2')}", multi.group("a"), multi.group("b")
    single = _SINGLE.search(text)
    if single:
        return single.group("q"), single.group("a"), single.group("b")
    raise line.error(
        "'g1_user_prompt' holds no MT-Bench pair template to read the answers from", field="g1_user_prompt"
    )


def pair_key(question_id: Any, turn: Any, model_a: str, model_b: str) -> tuple[str, str, frozenset[str]]:
    return str(question_id), str(turn), frozenset((model_a, model_b))


def _judge(data: dict[str, Any], path: Path, options: ImportOptions) -> str:
    if options.judge:
        return options.judge
    judge = data.get("judge")  # [model, template]: the model names the judge (its family), the
    if isinstance(judge, list) and judge:  # template stays in each judgment's source record
        return str(judge[0])
    return str(judge or path.stem)


def _item(line: SourceLine) -> Item:
    data = line.obj()
    for name in ("question_id", "model_1", "model_2"):
        if data.get(name) in (None, ""):
            raise line.error(f"'{name}' is missing", field=name)
    turn = data.get("turn", 1)
    question, answer_1, answer_2 = _texts(line)
    model_1, model_2 = str(data["model_1"]), str(data["model_2"])
    return Item(
        id=f"{data['question_id']}/turn{turn}/{model_1}/{model_2}",
        subset=f"turn-{turn}",
        instruction=question,
        output_1=answer_1,
        output_2=answer_2,
        metadata={"model_1": model_1, "model_2": model_2, "turn": turn, "question_id": data["question_id"]},
    )


def _human(
    paths: Sequence[Path], log: ImportedLog, by_pair: dict[tuple[str, str, frozenset[str]], Item]
) -> None:
    unmatched = 0
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        for line in read_records(path):
            data = line.obj()
            for name in ("question_id", "model_a", "model_b", "winner"):
                if data.get(name) in (None, ""):
                    raise line.error(f"'{name}' is missing", field=name)
            model_a, model_b = str(data["model_a"]), str(data["model_b"])
            item = by_pair.get(pair_key(data["question_id"], data.get("turn", 1), model_a, model_b))
            if item is None:
                unmatched += 1
                continue
            winner = str(data["winner"])
            if "tie" in winner:
                label = "tie"
            elif winner in ("model_a", "model_b"):
                named = model_a if winner == "model_a" else model_b
                label = "1" if item.metadata["model_1"] == named else "2"
            else:
                raise line.error(
                    f"'winner' must be model_a, model_b or tie..., got {winner!r}", field="winner"
                )
            log.human.append(HumanRow(item.id, label, annotator=str(data.get("judge") or "")))
    if unmatched:
        log.notes.append(f"{unmatched} human votes are on pairs the judgments file does not hold (left out)")


def agreement(
    judge_votes: dict[str, str], human: Sequence[HumanRow], *, ties: bool
) -> tuple[float | None, int]:
    """FastChat's agreement: each human vote against the judge's vote on the same item; without ties a
    vote pair where either is a tie is left out."""
    agree = total = 0
    for row in human:
        vote = judge_votes.get(row.item_id)
        if vote is None or (not ties and "tie" in (vote, row.label)):
            continue
        total += 1
        agree += vote == row.label
    return (agree / total if total else None), total


def _headlines(log: ImportedLog) -> None:
    for judge in log.judges:
        games: dict[str, list[str]] = {}
        for j in log.judgments:
            if j.judge == judge:
                games.setdefault(j.item_id, []).append(j.verdict or "invalid")
        # both games must agree, else the pair is a tie (the paper's convention); errors are ties too
        votes = {
            item: (v[0] if len(set(v)) == 1 and v[0] in ("1", "2") else "tie") for item, v in games.items()
        }
        for turn in ("turn-1", "turn-2"):
            rows = [
                h
                for h in log.human
                if h.item_id in votes and h.item_id.split("/")[1] == turn.replace("-", "")
            ]
            for ties, name in (
                (True, "mt_bench_agreement_with_ties"),
                (False, "mt_bench_agreement_without_ties"),
            ):
                value, n = agreement(votes, rows, ties=ties)
                if n:
                    rule = "compute_agreement.py: judge vote (inconsistent games = tie) vs each human vote"
                    log.headlines.append(Headline(judge, name, value, n, turn, rule))


def read(paths: Sequence[Path], options: ImportOptions) -> ImportedLog:
    log = ImportedLog(format="mt-bench")
    seen: dict[str, Item] = {}
    by_pair: dict[tuple[str, str, frozenset[str]], Item] = {}
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        for line in read_records(path):
            item = log.add_item(_item(line), seen, line)
            data = line.obj()
            by_pair[pair_key(data["question_id"], data.get("turn", 1), data["model_1"], data["model_2"])] = (
                item
            )
            judge = _judge(data, path, options)
            for game, order in (("g1", "orig"), ("g2", "swap")):
                winner = str(data.get(f"{game}_winner"))
                verdict = _WINNERS.get(winner, "invalid")
                letter = letter_of(order, verdict)
                raw = data.get(f"{game}_judgment")
                log.judgments.append(
                    pair_judgment(
                        judge, item, order, letter, line, raw=raw if isinstance(raw, str) else None,
                        parse_error=f"{game}_winner is {winner!r}",
                    )
                )  # fmt: skip
    _human(options.human, log, by_pair)
    _headlines(log)
    return log


IMPORTER = Importer(
    name="mt-bench",
    summary="MT-Bench pairwise judgments (FastChat gpt-4_pair.jsonl), --human joins the human judgments",
    read=read,
    takes_human=True,
)
