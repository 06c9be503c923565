"""Small files in the shapes of the peers' logs, written by the tests (never copied from the sources):
the field names and conventions follow each project's writer (JudgeBench run_judge.py, Arena-Hard
gen_judgment.py, FastChat common.play_a_match_pair, AlpacaEval annotations.json)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

FASTCHAT_MODELS = ("gpt-4", "claude-v1", "vicuna-13b-v1.3", "llama-13b")
# the judge prompt templates (FastChat data/judge_prompts.jsonl pair-v2 and pair-v2-multi-turn with the
# first turn filled in; Arena-Hard config prompt_template), rewritten here, not copied
PAIR_V2 = (
    "[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)
MULTI_TURN = "\n\n\n".join(
    f"<|The Start of Assistant {x}'s Conversation with User|>\n\n### User:\nq1\n\n### Assistant {x}:\n"
    f"first {x}\n\n### User:\n{{question_2}}\n\n### Assistant {x}:\n{{answer_{x.lower()}_2}}\n\n"
    f"<|The End of Assistant {x}'s Conversation with User|>"
    for x in ("A", "B")
)
ARENA = (
    "<|User Prompt|>\n{QUESTION}\n\n"
    "<|The Start of Assistant A's Answer|>\n{ANSWER_A}\n<|The End of Assistant A's Answer|>\n\n"
    "<|The Start of Assistant B's Answer|>\n{ANSWER_B}\n<|The End of Assistant B's Answer|>"
)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(("alpha", "beta", "gamma", "delta", "eps")) for _ in range(words))


def judgebench_rows(seed: int = 1, n: int = 40) -> list[dict[str, Any]]:
    """JudgeBench outputs: the second judgment judged (B, A), decisions A>B/B>A/A=B or a null entry."""
    rng = random.Random(seed)
    sources = ("mmlu-pro-health", "livebench-math", "livebench-reasoning", "livecodebench")
    rows = []
    for i in range(n):
        decisions = [rng.choice(("A>B", "B>A", "A=B", None)) for _ in range(2)]
        rows.append(
            {
                "pair_id": f"p{i}",
                "original_id": i,
                "source": sources[i % 4],
                "question": f"question {i}",
                "response_model": "gpt-4o-2024-05-13",
                "response_A": _text(rng, rng.randint(1, 9)),
                "response_B": _text(rng, rng.randint(1, 9)),
                "label": rng.choice(("A>B", "B>A")),
                "judge_name": "arena_hard",
                "judgments": [
                    None
                    if d is None and j == 0 and i % 7 == 0
                    else {"judgment": {"response": f"[[{d}]]"}, "decision": d}
                    for j, d in enumerate(decisions)
                ],
            }
        )
    return rows


def fastchat_pair_rows(seed: int = 2, n: int = 60) -> list[dict[str, Any]]:
    """FastChat gpt-4_pair.jsonl: game 1 shows model_1 as A, game 2 model_2 as A; winners mapped back."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        m1, m2 = rng.sample(FASTCHAT_MODELS, 2)
        a1, a2 = _text(rng, rng.randint(1, 12)), _text(rng, rng.randint(1, 12))
        turn = 1 + i % 2
        if turn == 1:
            prompt = PAIR_V2.format(question=f"q{i}", answer_a=a1, answer_b=a2)
        else:
            prompt = MULTI_TURN.format(question_2=f"q2 {i}", answer_a_2=a1, answer_b_2=a2)
        rows.append(
            {
                "question_id": 81 + i // 2,
                "model_1": m1,
                "model_2": m2,
                "g1_winner": rng.choice(("model_1", "model_2", "tie", "model_1", "error")),
                "g2_winner": rng.choice(("model_1", "model_2", "tie", "model_2")),
                "judge": ["gpt-4", "pair-v2" if turn == 1 else "pair-v2-multi-turn"],
                "g1_user_prompt": prompt,
                "g1_judgment": "verdict [[A]]",
                "g2_user_prompt": "swapped",
                "g2_judgment": "verdict [[B]]",
                "turn": turn,
                "tstamp": 1687000000.0 + i,
            }
        )
    return rows


def arena_hard_rows(seed: int = 3, n: int = 20, model: str = "llama-3-8b") -> list[dict[str, Any]]:
    """Arena-Hard model_judgment: game 1 A = baseline, B = model; game 2 swapped; scores A>>B .. B>>A."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        base, ans = _text(rng, rng.randint(1, 9)), _text(rng, rng.randint(1, 9))

        scores = [rng.choice(("A>>B", "A>B", "A=B", "B>A", "B>>A", None)) for _ in range(2)]
        prompts = [
            ARENA.format(QUESTION=f"q{i}", ANSWER_A=a, ANSWER_B=b) for a, b in ((base, ans), (ans, base))
        ]
        rows.append(
            {
                "uid": f"u{i}",
                "category": "arena-hard-v0.1",
                "judge": "gpt-4-1106-preview",
                "model": model,
                "baseline": "gpt-4-0314",
                "games": [
                    {
                        "user_prompt": prompts[0],
                        "judgment": f"... [[{scores[0]}]]",
                        "score": scores[0],
                    },
                    {
                        "user_prompt": prompts[1],
                        "judgment": f"... [[{scores[1]}]]",
                        "score": scores[1],
                    },
                ],
            }
        )
    return rows


def alpaca_rows(seed: int = 4, n: int = 30) -> list[dict[str, Any]]:
    """AlpacaEval annotations.json records: preference 1..2 (weighted), 1.5 a draw, null for none."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        pref = rng.choice((1.0, 2.0, 1.5, round(rng.uniform(1, 2), 4), None))
        rows.append(
            {
                "dataset": "helpful_base",
                "instruction": f"instruction {i}",
                "output_1": _text(rng, rng.randint(1, 9)),
                "generator_1": "gpt4_1106_preview",
                "output_2": _text(rng, rng.randint(1, 9)),
                "generator_2": "my-model",
                "annotator": "weighted_alpaca_eval_gpt4_turbo",
                "preference": pref,
            }
        )
    return rows
