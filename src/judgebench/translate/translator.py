"""Label-preserving translation (PROTOCOL §2): one call per item returns every requested condition as
strict JSON, validated with pydantic; invalid answers are re-asked with the error a bounded number of
times; fields too long for one answer are translated in paragraph pieces (never inside a code block)
and reassembled. Base models (no chat) translate field by field from a one-shot completion prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from judgebench.conditions import Condition
from judgebench.models.base import Message, ModelRequest
from judgebench.models.client import CallResult, ModelClient
from judgebench.paths import configs_dir
from judgebench.records import TEXT_FIELDS, Item, Variant

SYSTEM_PROMPT = """You translate evaluation data for a study of LLM judges. Each item has an instruction \
and two candidate outputs; one output follows the instruction better than the other, and your \
translation must keep that difference exactly as it is.

Rules:
- Translate the instruction and both outputs completely, into each requested target described below.
- Preserve every mistake: factual errors, wrong arithmetic, wrong formatting, ignored constraints, \
wrong length, wrong language register. Do not fix, improve, shorten or complete either output.
- Keep output_1 as output_1 and output_2 as output_2.
- Keep code blocks, inline code, URLs, numbers, units, markdown structure (headings, lists, tables, \
emphasis) and line breaks exactly where they are. Code stays code: do not translate it.
- If the instruction asks for an answer in English or about English words (spelling, rhymes, \
grammar), translate the instruction naturally and keep the English material the task is about.
- Reply with one JSON object and nothing else."""

PIECE_SYSTEM_PROMPT = """You translate one piece of a longer text used in a study of LLM judges. \
Translate it completely into each requested target. Preserve every mistake, number, line break, \
markdown mark and code exactly; do not fix, improve or shorten anything. Reply with one JSON object \
and nothing else."""


def _targets_text(conditions: Sequence[Condition]) -> str:
    lines = []
    for cond in conditions:
        lines.append(f'- "{cond.name}": {cond.language}. {cond.style}'.strip())
    return "\n".join(lines)


def item_messages(item: Item, conditions: Sequence[Condition]) -> list[Message]:
    source = {f: getattr(item, f) for f in TEXT_FIELDS}
    shape = {c.name: {"instruction": "...", "output_1": "...", "output_2": "..."} for c in conditions}
    user = (
        f"Targets:\n{_targets_text(conditions)}\n\n"
        f"Source item (JSON):\n{json.dumps(source, ensure_ascii=False, indent=1)}\n\n"
        f"Reply with a JSON object of this shape:\n{json.dumps(shape, ensure_ascii=False)}"
    )
    return [Message(role="system", content=SYSTEM_PROMPT), Message(role="user", content=user)]


def piece_messages(text: str, conditions: Sequence[Condition]) -> list[Message]:
    shape = {c.name: "..." for c in conditions}
    user = (
        f"Targets:\n{_targets_text(conditions)}\n\n"
        f"Text (JSON string):\n{json.dumps(text, ensure_ascii=False)}\n\n"
        f"Reply with a JSON object of this shape:\n{json.dumps(shape, ensure_ascii=False)}"
    )
    return [Message(role="system", content=PIECE_SYSTEM_PROMPT), Message(role="user", content=user)]


class _Fields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instruction: str
    output_1: str
    output_2: str


def _answer_model(conditions: Sequence[Condition], piece: bool) -> type[BaseModel]:
    value_type: type = str if piece else _Fields
    fields: dict[str, object] = {c.name: (value_type, ...) for c in conditions}
    return create_model("TranslationAnswer", __config__=ConfigDict(extra="ignore"), **fields)  # type: ignore[call-overload, no-any-return]


def _extract_json(text: str) -> object:
    stripped = text.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", stripped, re.DOTALL)
    if fence:
        stripped = fence.group(1)
    return json.loads(stripped)


def validate_answer(text: str, conditions: Sequence[Condition], *, piece: bool) -> dict[str, object]:
    """Parse and validate a translator reply; raises ValueError with a message fit to re-ask with."""
    try:
        data = _extract_json(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    try:
        parsed = _answer_model(conditions, piece).model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(f"the JSON does not have the required shape ({problems})") from None
    out = parsed.model_dump()
    for name, value in out.items():
        texts = [value] if piece else list(value.values())
        if any(not str(t).strip() for t in texts):
            raise ValueError(f"'{name}' has an empty field")
    return out


# --- splitting long fields ------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```|~~~)")


def split_paragraphs(text: str, max_chars: int) -> list[str]:
    """Pieces of at most ~max_chars, cut only at blank lines outside fenced code blocks.

    Joining the pieces with "" gives back the text exactly (separators stay with their piece).
    """
    blocks: list[str] = []
    current: list[str] = []
    in_code = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_code = not in_code
        current.append(line)
        if not in_code and not line.strip():
            blocks.append("".join(current))
            current = []
    if current:
        blocks.append("".join(current))
    pieces: list[str] = []
    buf = ""
    for block in blocks:
        if buf and len(buf) + len(block) > max_chars:
            pieces.append(buf)
            buf = ""
        buf += block
    if buf:
        pieces.append(buf)
    return pieces


def _rejoin(source_piece: str, translated: str) -> str:
    """Keep the source piece's trailing blank lines so paragraphs stay apart after reassembly."""
    trail = source_piece[len(source_piece.rstrip("\n")) :]
    return translated.rstrip("\n") + trail


# --- running one item -----------------------------------------------------------------------------


@dataclass
class ItemTranslation:
    item_id: str
    variants: list[Variant] = field(default_factory=list)
    failure: str | None = None
    attempts: int = 0
    results: list[CallResult] = field(default_factory=list)


@dataclass
class TranslatorSettings:
    max_tokens: int = 4096
    max_reasks: int = 2
    # a field longer than this many characters is translated in pieces
    piece_chars: int = 2500
    temperature: float = 0.0


async def _ask_json(
    client: ModelClient,
    messages: list[Message],
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    *,
    piece: bool,
    record: ItemTranslation,
) -> dict[str, object] | None:
    convo = list(messages)
    for attempt in range(settings.max_reasks + 1):
        json_mode = client.capabilities.json_mode
        request = ModelRequest(
            messages=convo,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            response_format="json" if json_mode else "text",
            context={"item_id": record.item_id, "stage": "translate", "attempt": attempt},
        )
        result = await client.call(request)
        record.results.append(result)
        record.attempts += 1
        if result.response is None:
            record.failure = f"translator call failed: {result.error}"
            return None
        text = result.response.text
        if result.response.finish_reason == "length":
            problem = "the reply was cut off at the output limit"
        else:
            try:
                return validate_answer(text, conditions, piece=piece)
            except ValueError as exc:
                problem = str(exc)
        record.failure = f"invalid translator reply after {attempt + 1} attempt(s): {problem}"
        convo = [
            *messages,
            Message(role="assistant", content=text),
            Message(
                role="user",
                content=f"Your reply could not be used: {problem}. Reply again with the JSON object only.",
            ),
        ]
    return None


async def translate_item_chat(
    client: ModelClient,
    item: Item,
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    source: str,
) -> ItemTranslation:
    record = ItemTranslation(item.id)
    long_fields = [f for f in TEXT_FIELDS if len(getattr(item, f)) > settings.piece_chars]
    texts: dict[str, dict[str, str]] = {c.name: {} for c in conditions}
    if not long_fields:
        answer = await _ask_json(
            client, item_messages(item, conditions), conditions, settings, piece=False, record=record
        )
        if answer is None:
            return record
        for cond in conditions:
            texts[cond.name] = dict(answer[cond.name])  # type: ignore[call-overload]
    else:
        for fname in TEXT_FIELDS:
            pieces = split_paragraphs(getattr(item, fname), settings.piece_chars)
            parts: dict[str, list[str]] = {c.name: [] for c in conditions}
            for piece in pieces:
                if not piece.strip():
                    for cond in conditions:
                        parts[cond.name].append(piece)
                    continue
                answer = await _ask_json(
                    client, piece_messages(piece, conditions), conditions, settings, piece=True, record=record
                )
                if answer is None:
                    record.failure = f"{fname}: {record.failure}"
                    return record
                for cond in conditions:
                    parts[cond.name].append(_rejoin(piece, str(answer[cond.name])))
            for cond in conditions:
                texts[cond.name][fname] = "".join(parts[cond.name])
    record.failure = None
    for cond in conditions:
        record.variants.append(
            Variant(item_id=item.id, condition=cond.name, source=source, **texts[cond.name])
        )
    return record


def completion_prompt_template() -> tuple[str, list[str]]:
    """The one-shot translation prompt for base models and its stop sequences."""
    path: Path = configs_dir() / "local_prompts" / "translate.txt"
    stops_path = configs_dir() / "local_prompts" / "translate_stop.json"
    template = path.read_text(encoding="utf-8") if path.exists() else _FALLBACK_COMPLETION
    stops = (
        json.loads(stops_path.read_text(encoding="utf-8")) if stops_path.exists() else ["\n\n###", "\n###"]
    )
    return template, list(stops)


_FALLBACK_COMPLETION = """Translate the English text into {language}. Keep numbers, code and line breaks.

English: The meeting starts at 9:30. Please bring 2 copies of the report.
{language}: 会议在9:30开始。请带2份报告。
###
English: {text}
{language}:"""


async def translate_item_completion(
    client: ModelClient,
    item: Item,
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    source: str,
) -> ItemTranslation:
    """Field by field, piece by piece, for base models that cannot answer in JSON."""
    record = ItemTranslation(item.id)
    template, stops = completion_prompt_template()
    for cond in conditions:
        fields: dict[str, str] = {}
        for fname in TEXT_FIELDS:
            out: list[str] = []
            for piece in split_paragraphs(getattr(item, fname), min(settings.piece_chars, 600)):
                if not piece.strip():
                    out.append(piece)
                    continue
                prompt = template.replace("{language}", cond.language).replace("{text}", piece.strip())
                request = ModelRequest(
                    prompt=prompt,
                    temperature=settings.temperature,
                    max_tokens=min(settings.max_tokens, max(64, len(piece) * 2)),
                    stop=stops,
                    context={"item_id": item.id, "stage": "translate", "field": fname},
                )
                result = await client.call(request)
                record.results.append(result)
                record.attempts += 1
                if result.response is None:
                    record.failure = f"{cond.name}.{fname}: translator call failed: {result.error}"
                    return record
                text = result.response.text.strip()
                if not text:
                    record.failure = f"{cond.name}.{fname}: the translator wrote nothing"
                    return record
                out.append(_rejoin(piece, text))
            fields[fname] = "".join(out)
        record.variants.append(Variant(item_id=item.id, condition=cond.name, source=source, **fields))
    return record


async def translate_item(
    client: ModelClient, item: Item, conditions: Sequence[Condition], settings: TranslatorSettings
) -> ItemTranslation:
    source = f"model:{client.name}"
    caps = client.capabilities
    if caps.completion and not caps.chat:
        return await translate_item_completion(client, item, conditions, settings, source)
    return await translate_item_chat(client, item, conditions, settings, source)
