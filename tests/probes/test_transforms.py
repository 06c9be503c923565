"""The probe transforms: each changes only what it says it changes, deterministically per item."""

from __future__ import annotations

import pytest

from judgebench.probes.markdown_patterns import strip_markdown
from judgebench.probes.probe_registry import load_probes
from judgebench.probes.transforms import TextContext, TransformError, append, pad, regex, terse

LENGTH = load_probes()["length"]
PAD = LENGTH.steps[0].params
TERSE = LENGTH.steps[1].params


def ctx(item: str = "Natural/0", language: str = "en", field: str = "output_2") -> TextContext:
    return TextContext(item_id=item, probe="length", field=field, language=language)


def test_pad_appends_count_sentences_of_the_items_language_and_keeps_the_text() -> None:
    text = "Paris is the capital of France."
    padded = pad(text, PAD, ctx())
    assert padded.startswith(text + "\n\n")
    added = padded[len(text) + 2 :]
    assert sum(s in added for s in PAD["sentences"]["en"]) == PAD["count"] == 3
    zh = pad("巴黎是法国的首都。", PAD, ctx(language="zh"))
    assert sum(s in zh for s in PAD["sentences"]["zh"]) == 3
    assert not any(s in zh for s in PAD["sentences"]["en"])


def test_pad_is_deterministic_per_item_and_varies_across_items() -> None:
    assert pad("x", PAD, ctx("a")) == pad("x", PAD, ctx("a"))
    paddings = {pad("x", PAD, ctx(f"Natural/{i}")) for i in range(12)}
    assert len(paddings) > 3  # several paddings, not one suffix for every item


def test_pad_falls_back_for_ls_and_names_a_language_without_sentences() -> None:
    ls = pad("text", PAD, ctx(language="ls"))
    assert any(s in ls for s in PAD["sentences"]["zh"])
    with pytest.raises(TransformError, match="no 'sentences' for language 'de'"):
        pad("text", PAD, ctx(language="de"))


def test_terse_drops_stock_lines_and_blank_runs_only() -> None:
    text = "Sure! Here is the answer:\n\n\n\nThe sum is 4.   \nIt follows from 2 + 2.\n\nI hope this helps!"
    assert terse(text, TERSE, ctx()) == "The sum is 4.\nIt follows from 2 + 2."
    plain = "The sum is 4."
    assert terse(plain, TERSE, ctx()) == plain
    # a line that merely contains a stock phrase is content, and stays
    kept = "I hope this helps you see why 4 is even.\nDone."
    assert terse(kept, TERSE, ctx()) == kept
    zh = terse("当然！\n\n答案是四。\n\n希望对您有所帮助！", TERSE, ctx(language="zh"))
    assert zh == "答案是四。"


def test_terse_never_empties_a_text() -> None:
    assert terse("I hope this helps!", TERSE, ctx()) == "I hope this helps!"


def test_strip_markdown_keeps_every_word() -> None:
    md = (
        "# Title\n\nSome **bold** and *italic* and `code` text, see [the docs](https://x.org).\n\n"
        "- first item\n* second item\n1. numbered\n\n> quoted line\n\n---\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('hi')\n```"
    )
    plain = strip_markdown(md)
    assert plain == (
        "Title\n\nSome bold and italic and code text, see the docs (https://x.org).\n\n"
        "first item\nsecond item\n1. numbered\n\nquoted line\n\n\na, b\n1, 2\n\nprint('hi')"
    )
    for word in ("Title", "bold", "italic", "code", "docs", "first", "second", "numbered", "quoted", "print"):
        assert word in plain
    assert strip_markdown("No markup here, 3 * 4 = 12 and snake_case_name.") == (
        "No markup here, 3 * 4 = 12 and snake_case_name."
    )


def test_append_and_regex_from_parameters() -> None:
    assert append("a", {"text": {"en": "b"}}, ctx()) == "a\n\nb"
    with pytest.raises(TransformError, match="language 'zh'"):
        append("a", {"text": {"en": "b"}}, ctx(language="zh"))
    assert regex("a1b22", {"pattern": r"\d+", "replacement": "#"}, ctx()) == "a#b#"


def test_strip_markdown_on_closing_heading_runs_and_blanks() -> None:
    """The linear patterns (issue 41) as before on markup, and a fill-in blank `______` (LLMBar has
    them) is text, not bold around `__` (before: two of its underscores were cut)."""
    assert strip_markdown("## Closed heading ##  ") == "Closed heading"
    assert strip_markdown("#NoSpace") == "#NoSpace"
    assert strip_markdown("![alt](img.png) and [t](http://u 'title')") == "alt and t (http://u)"
    assert strip_markdown("My name is ______ and ~~old~~ **new** __too__.") == (
        "My name is ______ and old new too."
    )
