"""What the simulated judge reads from the prompt it is sent (issue 31): the two responses as the
template rendered them, and whether each carries Markdown.

The planted length and formatting biases act on these, not on the call's context, so a probe that
failed to change the rendered texts (a transform not applied, a template that drops a response)
moves nothing and its test fails. The responses are found by the boundary lines `judge/templates.py`
(`fence`) puts around each text in the chat form: `<<<BEGIN RESPONSE A code>>>` ... `<<<END RESPONSE A
code>>>`, the same code on both lines, which no candidate text can forge.
"""

from __future__ import annotations

import re

from judgebench.models.base import ModelRequest

_CODE = re.compile(r"<<<BEGIN INSTRUCTION ([0-9a-f]+)>>>")


def _fenced(side: str, code: str) -> re.Pattern[str]:
    begin, end = f"<<<BEGIN RESPONSE {side} {code}>>>", f"<<<END RESPONSE {side} {code}>>>"
    return re.compile(re.escape(begin) + r"\n(?P<text>.*?)\n" + re.escape(end), re.S)


# Markdown marks (block and inline); plain numbered lists are plain text and do not count
_MARKS = (
    re.compile(r"^\s{0,3}#{1,6}\s+\S", re.M),  # heading
    re.compile(r"^\s*[-*+]\s+\S", re.M),  # bullet
    re.compile(r"^\s*(```|~~~)", re.M),  # code fence
    re.compile(r"^\s*\|?\s*:?-{2,}:?\s*\|", re.M),  # table separator
    re.compile(r"(\*\*|__)(?=\S).+?(?<=\S)\1"),  # bold
    re.compile(r"\[[^\]]+\]\([^)\s]+\)"),  # link
)


def prompt_text(request: ModelRequest) -> str:
    return "\n".join(m.content for m in request.messages or []) + (request.prompt or "")


def shown_responses(request: ModelRequest) -> tuple[str, str] | None:
    """Response A and response B as the prompt shows them; None when the prompt fences neither."""
    text = prompt_text(request)
    code = _CODE.search(text)  # the real code: the instruction's fence comes first in the prompt
    if code is None:
        return None
    found = [_fenced(side, code.group(1)).search(text) for side in ("A", "B")]
    if found[0] is None or found[1] is None:
        return None
    return found[0].group("text"), found[1].group("text")


def has_markdown(text: str) -> bool:
    """Whether a text carries any Markdown mark (heading, bullet, code fence, table, bold, link)."""
    return any(mark.search(text) for mark in _MARKS)
