"""The completion path for base models (no chat): field by field, piece by piece, failures kept.

A stand-in client answers in process, so this runs without the embedded model; the embedded model
itself is tested with the local provider.
"""

from __future__ import annotations

import asyncio

from judgebench.conditions import select_conditions
from judgebench.models.base import Capabilities, ModelRequest, ModelResponse
from judgebench.models.client import CallResult, ModelClient
from judgebench.records import Item
from judgebench.translate.translator import TranslatorSettings, translate_item


class BaseModelClient:
    """Translates a completion prompt's last `English:` text into a fixed Chinese marker."""

    name = "local:base"
    capabilities = Capabilities(chat=False, completion=True)

    def __init__(self, *, cached_empty: bool = False, live_empty: bool = False) -> None:
        self.cached_empty = cached_empty
        self.live_empty = live_empty
        self.prompts: list[str] = []
        self.refreshed = 0

    async def call(self, request: ModelRequest, *, refresh: bool = False) -> CallResult:
        assert request.prompt is not None and request.messages is None
        english = request.prompt.rsplit("English: ", 1)[1].rsplit("\n", 1)[0]
        if refresh:
            self.refreshed += 1
        from_cache = self.cached_empty and not refresh
        empty = from_cache or self.live_empty
        if not from_cache:
            self.prompts.append(english)
        text = "" if empty else f" 译文（{english}）\n"
        return CallResult(
            cache_key="k", prompt_hash="h", response=ModelResponse(text=text), from_cache=from_cache
        )


ITEM = Item(
    id="Natural/0",
    subset="Natural",
    instruction="Name 2 colors.",
    output_1="\n\n".join(f"Paragraph {k}. " + "word " * 50 + "end." for k in range(4)),
    output_2="Green.",
)


def _run(client: BaseModelClient, conditions: str = "zh") -> object:
    fake: ModelClient = client  # type: ignore[assignment]
    return asyncio.run(translate_item(fake, ITEM, select_conditions(conditions), TranslatorSettings()))


def test_base_model_translates_field_by_field_and_keeps_paragraphs() -> None:
    client = BaseModelClient()
    result = _run(client, "zh,ls")
    assert result.failure is None  # type: ignore[attr-defined]
    variants = {v.condition: v for v in result.variants}  # type: ignore[attr-defined]
    # 4 paragraphs of ~265 characters: two pieces of two paragraphs (at most 600 characters each)
    halves = ITEM.output_1.split("\n\n")
    first, second = "\n\n".join(halves[:2]), "\n\n".join(halves[2:])
    assert variants["zh"].output_1 == f"译文（{first}）\n\n译文（{second}）"
    assert variants["ls"].instruction == "译文（Name 2 colors.）"
    assert variants["zh"].source == "model:local:base"
    # one prompt per piece, field and condition
    assert client.prompts == [ITEM.instruction, first, second, ITEM.output_2] * 2


def test_a_stored_empty_answer_is_asked_again_and_a_live_one_fails_the_item() -> None:
    replayed = BaseModelClient(cached_empty=True)
    result = _run(replayed)
    assert result.failure is None and replayed.refreshed == 4  # type: ignore[attr-defined]

    empty = BaseModelClient(live_empty=True)
    failed = _run(empty)
    assert failed.variants == []  # type: ignore[attr-defined]
    assert failed.failure == "zh.instruction: the translator wrote nothing"  # type: ignore[attr-defined]
    assert failed.attempts == 1  # type: ignore[attr-defined]
