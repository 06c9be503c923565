"""Splitting long fields for translation: pieces reassemble exactly and never cut a code block."""

from __future__ import annotations

import pytest

from judgebench.translate.audit import code_blocks
from judgebench.translate.translator import _rejoin, split_paragraphs

PROSE = "\n\n".join(f"Paragraph {k} has a few words in it, about sixty characters." for k in range(12))
# code blocks longer than the budget, with blank lines and fence-like lines inside
NESTED = "````markdown\nExample:\n\n```python\n" + "print(1)\n\n" * 20 + "```\n\nEnd of example.\n````"
TILDE = "~~~\nfirst\n\n```\nnot a fence end here\n\n" + "still code\n\n" * 20 + "~~~"
LONG_LINE = " ".join(f"Sentence number {k} ends here." for k in range(80))


@pytest.mark.parametrize(
    "text",
    [
        PROSE,
        f"Intro.\n\n{NESTED}\n\n{PROSE}",
        f"{PROSE}\n\n{TILDE}\n\nAfter.",
        f"{PROSE}\n\n```\nunclosed code\n\nto the end",
        LONG_LINE,
        "line one\nline two\n" * 40,
        "",
    ],
)
def test_pieces_join_back_exactly_and_keep_code_whole(text: str) -> None:
    pieces = split_paragraphs(text, 200)
    assert "".join(pieces) == text
    blocks = code_blocks(text)
    for block in blocks:
        # every code block lies wholly inside one piece
        assert any(block in piece for piece in pieces)
    if text:
        assert len(pieces) > 1
    for piece in pieces:
        # a piece over the budget holds a code block: nothing else may exceed it
        assert len(piece) <= 200 or any(b and b in piece for b in blocks)


def test_a_long_prose_line_is_cut_after_sentence_ends() -> None:
    pieces = split_paragraphs(LONG_LINE, 300)
    assert all(len(p) <= 300 for p in pieces) and len(pieces) >= 8
    assert all(p.endswith("here. ") for p in pieces[:-1])


def test_short_text_is_one_piece() -> None:
    assert split_paragraphs("One line.\n\nTwo lines.", 2500) == ["One line.\n\nTwo lines."]


@pytest.mark.parametrize(
    ("source", "translated", "expected"),
    [
        ("First paragraph.\n\n", "第一段。", "第一段。\n\n"),
        ("A sentence. ", "一句话。\n", "一句话。 "),
        ("  indented line\n", "缩进的行", "  缩进的行\n"),
        ("\n\n", "", "\n\n"),
    ],
)
def test_rejoin_keeps_the_source_whitespace(source: str, translated: str, expected: str) -> None:
    assert _rejoin(source, translated) == expected


def test_planned_messages_match_what_the_translator_sends() -> None:
    from judgebench.conditions import select_conditions
    from judgebench.records import Item
    from judgebench.translate.translator import TranslatorSettings, planned_messages

    conditions = select_conditions("zh,ls")
    short = Item(id="Natural/0", subset="Natural", instruction="Hi.", output_1="Hello.", output_2="Yo.")
    assert len(planned_messages(short, conditions, TranslatorSettings())) == 1
    long = short.model_copy(update={"output_1": "\n\n".join(["A sentence of forty characters or so."] * 100)})
    plans = planned_messages(long, conditions, TranslatorSettings(piece_chars=1000))
    # instruction and output_2 whole, output_1 in pieces of at most 1000 characters
    assert len(plans) == 2 + len(split_paragraphs(long.output_1, 1000)) >= 6
    assert all(m[0].content.startswith("You translate one piece") for m in plans)
