"""A corpus of real-looking judge replies with the reading each must get (issue 15), and a property:
a reply that names both letters without one clear winner is never read as a winner."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgebench.config.paths import configs_dir
from judgebench.judge.parse import parse_verdict
from judgebench.judge.templates import load_template

DEFAULT = load_template()
LLMBAR = load_template(configs_dir() / "templates" / "judge_llmbar.toml")

# (reply, expected winner) for the default template (JSON answer format with tolerant fallbacks)
DEFAULT_CORPUS: list[tuple[str, str]] = [
    # strict JSON
    ('{"winner": "A", "confidence": 0.9, "reason": "follows the format"}', "A"),
    ('{"winner": "B", "confidence": 0.7, "reason": "A ignores the word limit"}', "B"),
    ('{"winner": "Tie", "confidence": 0.5, "reason": "both correct"}', "Tie"),
    ('{"winner": "Response A", "confidence": 80, "reason": "x"}', "A"),
    ('{"winner": "output (b)", "reason": "x"}', "B"),
    ('{"winner": "draw"}', "Tie"),
    ('{"winner": "C"}', "invalid"),
    ('{"winner": "both"}', "invalid"),
    ('{"winner": null}', "invalid"),
    ('{"winner": ""}', "invalid"),
    ('Here is my verdict: {"winner": "B", "confidence": 0.8, "reason": "shorter"} Thanks.', "B"),
    ('{"winner": "A"} ... on reflection {"winner": "B"}', "invalid"),
    # fenced JSON
    ('```json\n{"winner": "A", "confidence": 0.6, "reason": "ok"}\n```', "A"),
    ('```\n{"winner": "B"}\n```', "B"),
    ('```json\n{"winner": "tie", "reason": "same"}\n```', "Tie"),
    # bare answers
    ("A", "A"),
    ("B.", "B"),
    ("[[A]]", "A"),
    ("Response B", "B"),
    ("Tie", "Tie"),
    ("Equal", "Tie"),
    # markdown verdicts
    ("**Winner:** A\n\nResponse A follows every constraint.", "A"),
    ("### Verdict\nWinner: B\n\nB keeps the bullet format.", "B"),
    ("Final verdict: [[B]]", "B"),
    ("My final verdict is [[A]].", "A"),
    ("Verdict: tie", "Tie"),
    ("**Winner: Tie** - both answers are correct.", "Tie"),
    # free text
    ("Response A is better because it answers in three sentences.", "A"),
    ("Response B is clearly better: it follows the requested format.", "B"),
    ("Both are fluent, but Response A is better at following the instruction.", "A"),
    ("I choose Response B.", "B"),
    ("I would pick B, since A ignores the constraint.", "B"),
    ("The better response is B.", "B"),
    ("The winner is a close call, but I pick B.", "B"),
    ("After comparing, the winner is B.", "B"),
    ("It's a tie: both responses satisfy the instruction equally.", "Tie"),
    ("Both responses are equally good.", "Tie"),
    ("Assistant A is superior.", "A"),
    ("Output (b) is better.", "B"),
    # nothing readable
    ("", "invalid"),
    ("I need more information to answer.", "invalid"),
    ("As an AI language model, I cannot judge this.", "invalid"),
    ("Sorry, I can't help with that request.", "invalid"),
    ("Let me think step by step about the instruction.", "invalid"),
    ("The answer is 42.", "invalid"),
    ("Both responses have strengths and weaknesses.", "invalid"),
    # contradictions and ambiguity
    ("Response A is better. Actually, Response B is better.", "invalid"),
    ("Winner: A. Winner: B.", "invalid"),
    ("[[A]] or [[B]], hard to say.", "invalid"),
    ("I pick A; no wait, I choose B.", "invalid"),
    # negations and refusals
    ("There is no winner; A is wrong and B is wrong.", "invalid"),
    ("Neither is better: A and B both fail.", "invalid"),
    ("I cannot decide between A and B.", "invalid"),
    ("Response A is not better than Response B, and B is not better either.", "invalid"),
    ("No clear winner. Response A is better in tone, B in content.", "invalid"),
    ("None of them follows the instruction.", "invalid"),
    # Chinese answers
    ("胜者：A", "A"),
    ("答案是B", "B"),
    ("回答A更好，因为它遵循了指令。", "A"),
    ("输出 B 更好。", "B"),
    ("平局", "Tie"),
    ("两个回答不分胜负。", "Tie"),
    ("无法判断哪个回答更好。", "invalid"),
    ('{"winner": "A", "reason": "回答A遵循了格式"}', "A"),
]

# the LLMBar-style template: "Output (a)" / "Output (b)" patterns, no tie
LLMBAR_CORPUS: list[tuple[str, str]] = [
    ("Output (a)", "A"),
    ("Output (b)", "B"),
    ("Output (a).", "A"),
    ("output (B)", "B"),
    ("Output (b)\n\nExplanation: Output (a) misses the second requirement.", "B"),
    ("Output (a). Because Output (b) answers another question.", "A"),
    ("Output (a) or Output (b)? I choose Output (b).", "invalid"),
    ("Output (a) is worse; Output (b) is better.", "invalid"),
    ("I think Output (a) or maybe Output (b)", "invalid"),
    ("Neither Output (a) nor Output (b) follows the instruction.", "invalid"),
    ("Tie", "invalid"),
    ("Both are good.", "invalid"),
]


def test_the_corpus_is_large_enough() -> None:
    assert len(DEFAULT_CORPUS) + len(LLMBAR_CORPUS) >= 60


@pytest.mark.parametrize(("reply", "expected"), DEFAULT_CORPUS)
def test_default_template_corpus(reply: str, expected: str) -> None:
    parsed = parse_verdict(reply, DEFAULT)
    assert parsed.winner == expected, parsed
    if expected == "invalid":
        assert parsed.parse_error  # an unreadable answer always says why


@pytest.mark.parametrize(("reply", "expected"), LLMBAR_CORPUS)
def test_llmbar_template_corpus(reply: str, expected: str) -> None:
    parsed = parse_verdict(reply, LLMBAR)
    assert parsed.winner == expected, parsed


# mentions of the two answers in each template's own words (not verdict markers such as [[B]],
# which do name a winner)
_MENTIONS = {
    "default": ["A", "B", "Response A", "Response B", "Output (a)", "Output (b)", "Assistant A"],
    "llmbar": ["Output (a)", "Output (b)"],
}
_TEMPLATES = {"default": DEFAULT, "llmbar": LLMBAR}
_WINNER_WORDS = ("winner", "better", "best", "pick", "choose", "prefer", "select", "go with", "vote")
_FILLER = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="{}[]"), max_size=40
).filter(lambda text: not any(word in text.lower() for word in _WINNER_WORDS))


def _letter(name: str) -> str:
    return "A" if name.rstrip(")]").endswith(("A", "a")) else "B"


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_MENTIONS)), st.data())
def test_naming_both_letters_without_a_clear_winner_is_never_a_winner(name: str, data: st.DataObject) -> None:
    """Text that only *mentions* both answers (no JSON winner, no phrase that names one winner) is
    invalid, whatever the words around the mentions: mentioning A and B is a verdict for neither."""
    mentions = st.lists(st.tuples(_FILLER, st.sampled_from(_MENTIONS[name])), min_size=2, max_size=5)
    parts = data.draw(mentions.filter(lambda ps: {_letter(m) for _, m in ps} == {"A", "B"}))
    reply = "I compared " + " ".join(f"{filler} {mention}" for filler, mention in parts)
    parsed = parse_verdict(reply, _TEMPLATES[name])
    assert parsed.winner in ("invalid", "Tie"), (reply, parsed)
