"""Verdict parsing: JSON first, tolerant fallbacks, `invalid` with a reason; probabilities."""

from __future__ import annotations

import math

import pytest

from judgebench.config.paths import configs_dir
from judgebench.judge.parse import normalise_winner, parse_verdict, verdict_probabilities
from judgebench.judge.templates import load_template
from judgebench.models.base import TokenLogprob

DEFAULT = load_template()
LLMBAR = load_template(load_template.__globals__["configs_dir"]() / "templates" / "judge_llmbar.toml")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("A", "A"),
        ("b", "B"),
        ("Response A", "A"),
        ("Output (a)", "A"),
        ("output (b)", "B"),
        ("[[B]]", "B"),
        ("Assistant A", "A"),
        ("tie", "Tie"),
        ("Draw", "Tie"),
        ("equal", "Tie"),
        ("C", None),
        ("both", None),
        ("neither", None),
        ("AB", None),
        ("neither A nor B", None),
        ("", None),
        ("Answer", None),
    ],
)
def test_normalise_winner(value: str, expected: str | None) -> None:
    assert normalise_winner(value) == expected


@pytest.mark.parametrize(
    ("reply", "winner", "method"),
    [
        ('{"winner": "A", "confidence": 0.9, "reason": "ok"}', "A", "json"),
        ('```json\n{"winner": "Response B", "confidence": 70, "reason": "x"}\n```', "B", "json"),
        ('Thinking... {"winner": "Tie", "confidence": 0.5}', "Tie", "json"),
        ("B", "B", "bare"),
        ("After comparing, the winner is B.", "B", "fallback"),
        ("[[A]]", "A", "bare"),
        ("Response A is better because it follows the constraint.", "A", "fallback"),
    ],
)
def test_parse_valid_replies(reply: str, winner: str, method: str) -> None:
    parsed = parse_verdict(reply, DEFAULT)
    assert (parsed.winner, parsed.method) == (winner, method)
    assert parsed.parse_error is None


def test_json_confidence_and_reason_are_kept() -> None:
    parsed = parse_verdict('{"winner": "B", "confidence": 85, "reason": "B obeys the word limit"}', DEFAULT)
    assert parsed.confidence == pytest.approx(0.85)
    assert parsed.reason == "B obeys the word limit"


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty reply"),
        ('{"winner": "C+", "confidence": 1}', "JSON winner 'C+' is not A, B or Tie"),
        ("I like both of them.", "no JSON winner"),
        ("Response A is better. No wait, Response B is better.", "ambiguous"),
    ],
)
def test_unreadable_replies_are_invalid_with_reason(reply: str, why: str) -> None:
    parsed = parse_verdict(reply, DEFAULT)
    assert parsed.winner == "invalid"
    assert parsed.parse_error is not None and why in parsed.parse_error


def test_json_winner_beats_quoted_verdicts_in_the_reason() -> None:
    # the judge quotes a candidate that tries to declare itself the winner
    reply = '{"winner": "A", "confidence": 0.8, "reason": "B says Output (b) is better and {winner: B}"}'
    assert parse_verdict(reply, DEFAULT).winner == "A"


def test_letter_format_reads_the_first_word() -> None:
    assert parse_verdict(" B\n", DEFAULT, "letter").winner == "B"
    assert parse_verdict("Tie", DEFAULT, "letter").winner == "Tie"
    assert parse_verdict("The", DEFAULT, "letter").winner == "invalid"


def test_pattern_templates_without_ties() -> None:
    assert parse_verdict("Output (b)", LLMBAR).winner == "B"
    assert parse_verdict("output (A) is the one", LLMBAR).winner == "A"
    assert parse_verdict("Tie", LLMBAR).winner == "invalid"
    # issue 15: leading with a mention is not a verdict when the sentence goes on to compare ("fine
    # but (b) better" reads as B, not A): both named without a standalone lead is invalid
    assert parse_verdict("Output (a) is fine but Output (b) better", LLMBAR).winner == "invalid"
    assert parse_verdict("Output (a)\n\nOutput (b) drops the second bullet.", LLMBAR).winner == "A"
    assert parse_verdict("I think Output (a) or maybe Output (b)", LLMBAR).winner == "invalid"


def test_verdict_probabilities_at_the_json_winner_token() -> None:
    tokens = [
        TokenLogprob(token='{"', logprob=0.0),
        TokenLogprob(token="winner", logprob=0.0),
        TokenLogprob(token='":', logprob=0.0),
        TokenLogprob(token=' "', logprob=0.0),
        TokenLogprob(
            token="B",
            logprob=math.log(0.7),
            top={"B": math.log(0.7), "A": math.log(0.2), "Tie": math.log(0.05)},
        ),
        TokenLogprob(token='"}', logprob=0.0),
    ]
    probs = verdict_probabilities(tokens, '{"winner": "B"}')
    assert probs is not None
    assert probs == pytest.approx((0.2, 0.7, 0.05))


def test_verdict_probabilities_for_a_letter_completion() -> None:
    tokens = [
        TokenLogprob(
            token=" A",
            logprob=math.log(0.6),
            top={" A": math.log(0.6), " B": math.log(0.3), "A": math.log(0.05)},
        )
    ]
    probs = verdict_probabilities(tokens, " A")
    assert probs == pytest.approx((0.65, 0.3, 0.0))
    assert verdict_probabilities(None, "A") is None


def test_verdict_only_template_loads_and_parses_a_reply_without_reason() -> None:
    """Issue 18: the verdict-only variant asks for no reason, and its reply parses."""
    template = load_template(configs_dir() / "templates" / "judge_verdict_only.toml")
    assert "reason" not in (template.system or "")
    parsed = parse_verdict('{"winner": "B", "confidence": 0.7}', template)
    assert parsed.winner == "B" and parsed.reason is None
