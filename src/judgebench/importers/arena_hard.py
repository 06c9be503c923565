"""Arena-Hard judgments (`data/<bench>/model_judgment/<judge>/<model>.jsonl` of lmarena/arena-hard-auto):
one question a line with `uid` (`question_id` in older files), `category`, `judge`, `model`, `baseline`
and two `games`. Game 1 shows the baseline as A and the model as B; game 2 swaps them
(`gen_judgment.py`). Each game has `score` (`A>>B`, `A>B`, `A=B`, `B>A`, `B>>A`, or null when no verdict
was found) and the judge's text (`judgment`: a string, or `{"answer": ...}`); the prompt it was shown
(`user_prompt`, or `prompt` as chat messages) holds the question and both answers, which are read back
from it with the Arena-Hard template.

An item is one question of one model: output_1 the baseline's answer, output_2 the model's; unlabelled.
The headline is Arena-Hard's score (`show_result.py`): per game, the model's share with `>>` weighted
3 (A>>B = three 1s, A>B = 1, A=B = 0.5, ...), both games, mean over the model's questions; a question
with a null game is left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgebench.importers.importer_registry import Importer, ImportOptions
from judgebench.importers.log import Headline, ImportedLog, SourceLine, pair_judgment, read_records, sha256_of
from judgebench.records import Item, Winner

DEFAULT_BASELINE = "gpt-4-0314"  # Arena-Hard v0.1's baseline, for files that do not name one
WEIGHT = 3  # show_result.py's weight of a strong (`>>`) verdict
_LETTERS: dict[str, tuple[Winner, int]] = {
    "A>>B": ("A", WEIGHT), "A>B": ("A", 1), "A=B": ("Tie", 1), "B=A": ("Tie", 1), "B>A": ("B", 1),
    "B>>A": ("B", WEIGHT), "A<B": ("B", 1), "A<<B": ("B", WEIGHT), "B<A": ("A", 1), "B<<A": ("A", WEIGHT),
}  # fmt: skip
_PROMPT = re.compile(
    r"<\|User Prompt\|>\n(?P<q>.*?)\n\n<\|The Start of Assistant A's Answer\|>\n(?P<a>.*?)\n"
    r"<\|The End of Assistant A's Answer\|>\n\n<\|The Start of Assistant B's Answer\|>\n(?P<b>.*?)\n"
    r"<\|The End of Assistant B's Answer\|>",
    re.S,
)


def _prompt_text(game: dict[str, Any]) -> str | None:
    if isinstance(game.get("user_prompt"), str):
        return str(game["user_prompt"])
    messages = game.get("prompt")
    if isinstance(messages, list):
        users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        return users[-1] if users and isinstance(users[-1], str) else None
    return None


def _texts(games: list[Any], line: SourceLine) -> tuple[str, str, str]:
    """(question, baseline answer, model answer) from the first game's prompt that has them."""
    for index, game in enumerate(games):
        prompt = _prompt_text(game) if isinstance(game, dict) else None
        match = _PROMPT.search(prompt or "")
        if match:
            a, b = match.group("a"), match.group("b")
            return match.group("q"), *((a, b) if index == 0 else (b, a))
    raise line.error(
        "no game holds the Arena-Hard prompt (<|User Prompt|> ... Assistant A's/B's Answer) to read the "
        "question and answers from",
        field="games",
    )


def _judge_text(game: dict[str, Any]) -> str | None:
    text = game.get("judgment")
    if isinstance(text, dict):
        text = text.get("answer")
    return text if isinstance(text, str) else None


def _model_share(games: list[Any]) -> list[float] | None:
    """show_result.py's scores of one question for the model (None: a game has no score)."""
    scores = [g.get("score") if isinstance(g, dict) else None for g in games]
    if len(scores) != 2 or any(s not in _LETTERS for s in scores):
        return None
    out: list[float] = []
    for index, score in enumerate(scores):
        letter, weight = _LETTERS[str(score)]
        model_letter = "B" if index == 0 else "A"
        share = 0.5 if letter == "Tie" else 1.0 if letter == model_letter else 0.0
        out.extend([share] * weight)
    return out


def _item(line: SourceLine, options: ImportOptions) -> tuple[Item, str, str]:
    data = line.obj()
    qid = data.get("uid", data.get("question_id"))
    if qid in (None, ""):
        raise line.error("no 'uid' (or 'question_id')", field="uid")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise line.error("'model' must name the answering model", field="model")
    baseline = str(data.get("baseline") or options.setting("baseline", DEFAULT_BASELINE))
    games = data.get("games")
    if not isinstance(games, list) or not 1 <= len(games) <= 2:
        raise line.error("'games' must be a list of one or two games", field="games")
    question, base_answer, model_answer = _texts(games, line)
    item = Item(
        id=f"{qid}/{model}",
        subset=str(data.get("category") or "default"),
        instruction=question,
        output_1=base_answer,
        output_2=model_answer,
        metadata={"model_1": baseline, "model_2": model, "question_id": str(qid)},
    )
    return item, model, baseline


def read(paths: Sequence[Path], options: ImportOptions) -> ImportedLog:
    log = ImportedLog(format="arena-hard")
    seen: dict[str, Item] = {}
    shares: dict[tuple[str, str], list[float]] = {}
    counted: dict[tuple[str, str], int] = {}
    for path in paths:
        log.sources[str(path)] = sha256_of(path)
        for line in read_records(path):
            item, model, _ = _item(line, options)
            item = log.add_item(item, seen, line)
            data = line.obj()
            judge = options.judge or str(data.get("judge") or path.parent.name)
            games = data["games"]
            for game, order in zip(games, ("orig", "swap"), strict=False):
                if game is None:
                    log.judgments.append(
                        pair_judgment(
                            judge,
                            item,
                            order,
                            None,
                            line,
                            raw=None,
                            parse_error="null game (the call failed)",
                        )
                    )
                    continue
                if not isinstance(game, dict):
                    raise line.error("each game must be an object or null", field="games")
                score = game.get("score")
                letter, weight = (
                    _LETTERS.get(str(score), ("invalid", 0)) if score is not None else ("invalid", 0)
                )
                problem = "null score in the source" if score is None else f"unknown score {score!r}"
                log.judgments.append(
                    pair_judgment(
                        judge, item, order, letter, line, raw=_judge_text(game), parse_error=problem,
                        extra={"score": score, "weight": weight},
                    )
                )  # fmt: skip
            share = _model_share(games)
            key = (judge, model)
            counted[key] = counted.get(key, 0) + 1
            if share is not None:
                shares.setdefault(key, []).extend(share)
    rule = "show_result.py: model's share per game (>> weighted 3), both games, mean; null games left out"
    for (judge, model), total in counted.items():
        values = shares.get((judge, model), [])
        value = sum(values) / len(values) if values else None
        log.headlines.append(Headline(judge, "arena_hard_score", value, total, "all", rule, system=model))
    return log


IMPORTER = Importer(
    name="arena-hard",
    summary="Arena-Hard model_judgment/<judge>/<model>.jsonl (two games, scores A>>B .. B>>A)",
    read=read,
    settings={"baseline": f"the baseline model of files that name none (default {DEFAULT_BASELINE})"},
)
