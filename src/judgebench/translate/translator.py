"""Label-preserving translation (PROTOCOL §2): one call per item returns every requested condition as
strict JSON, validated with pydantic; invalid answers are re-asked with the error a bounded number of
times; fields too long for one answer are translated in paragraph pieces (never inside a code block)
and reassembled. Base models (no chat) translate field by field from a one-shot completion prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from judgebench.conditions import Condition
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError
from judgebench.models.base import Message, ModelRequest
from judgebench.models.client import CallResult, ModelClient
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


def validate_answer(
    text: str,
    conditions: Sequence[Condition],
    *,
    piece: bool,
    source: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """Parse and validate a translator reply; raises ValueError with a message fit to re-ask with.

    A translated field must not be empty unless its `source` field is empty too (an empty output is
    a legitimate, bad answer that the translation has to keep)."""
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
        texts = {name: value} if piece else {f"{name}.{f}": t for f, t in value.items()}
        for where, translated in texts.items():
            field_name = where.rpartition(".")[2]
            allowed = source is not None and not source.get(field_name, "x").strip()
            if not str(translated).strip() and not allowed:
                raise ValueError(f"'{where}' is empty")
    return out


# --- splitting long fields ------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SENTENCE_END = re.compile(r"(?<=[.!?;:。！？；：]\s)")


def _closes_fence(line: str, fence: str) -> bool:
    """A closing fence (CommonMark): the opening character, at least as many of it, nothing else."""
    bare = line.strip()
    return len(line) - len(line.lstrip(" ")) <= 3 and len(bare) >= len(fence) and set(bare) == {fence[0]}


def _blocks(text: str) -> list[tuple[str, bool]]:
    """(paragraph with its trailing blank lines, whether it holds fenced code), cut at blank lines
    outside code blocks; an unclosed fence runs to the end, as the audit reads it."""
    blocks: list[tuple[str, bool]] = []
    current: list[str] = []
    fence = ""
    has_code = False
    for line in text.splitlines(keepends=True):
        if fence:
            if _closes_fence(line, fence):
                fence = ""
        else:
            match = _FENCE.match(line)
            if match:
                fence, has_code = match.group(1), True
        current.append(line)
        if not fence and not line.strip():
            blocks.append(("".join(current), has_code))
            current, has_code = [], False
    if current:
        blocks.append(("".join(current), has_code))
    return blocks


def _split_prose(block: str, max_chars: int) -> list[str]:
    """A prose paragraph too long for one answer, cut at line ends, then after sentence ends."""
    units: list[str] = []
    for line in block.splitlines(keepends=True):
        units.extend(_SENTENCE_END.split(line) if len(line) > max_chars else [line])
    return [u for u in units if u]


def split_paragraphs(text: str, max_chars: int) -> list[str]:
    """Pieces of at most ~max_chars, cut at blank lines, never inside a fenced code block.

    A prose paragraph longer than `max_chars` is cut at line ends, then at sentence ends; a code
    block stays whole whatever its size. Joining the pieces with "" gives back the text exactly.
    """
    units: list[str] = []
    for block, has_code in _blocks(text):
        if has_code or len(block) <= max_chars:
            units.append(block)
        else:
            units.extend(_split_prose(block, max_chars))
    pieces: list[str] = []
    buf = ""
    for unit in units:
        if buf and len(buf) + len(unit) > max_chars:
            pieces.append(buf)
            buf = ""
        buf += unit
    if buf:
        pieces.append(buf)
    return pieces


def _rejoin(source_piece: str, translated: str) -> str:
    """Keep the source piece's surrounding whitespace (blank lines between paragraphs, the space
    after a sentence, indentation) so that the pieces reassemble like the source."""
    body = source_piece.strip()
    if not body:
        return source_piece
    lead = source_piece[: source_piece.index(body[0])]
    trail = source_piece[len(source_piece.rstrip()) :]
    return lead + translated.strip() + trail


CUT_OFF = "the reply was cut off at the output limit"

# --- running one item -----------------------------------------------------------------------------


@dataclass
class ItemTranslation:
    item_id: str
    variants: list[Variant] = field(default_factory=list)
    failure: str | None = None
    # requests sent to the provider for this item in this run (answers from the cache not counted)
    attempts: int = 0
    results: list[CallResult] = field(default_factory=list)


@dataclass
class TranslatorSettings:
    """How the translator is asked; checked on creation so that no setting can skip an item."""

    max_tokens: int = 4096
    # re-asks after an unusable answer (0: one ask only)
    max_reasks: int = 2
    # source characters one answer covers for two targets (fewer per target when there are more);
    # a longer item is translated field by field, in pieces of at most this size
    piece_chars: int = 2500
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if self.max_reasks < 0:
            raise ConfigError(f"max_reasks must be 0 or more, got {self.max_reasks}")
        if self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.piece_chars < 100:
            raise ConfigError(f"piece_chars must be at least 100, got {self.piece_chars}")


async def _ask_json(
    client: ModelClient,
    messages: list[Message],
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    *,
    piece: bool,
    record: ItemTranslation,
    source: Mapping[str, str] | None = None,
) -> dict[str, object] | None:
    """Ask, validate, and re-ask with the error up to `max_reasks` times.

    The conversation grows with each failed answer, so every re-ask is a new request (an identical
    one would be answered from the cache). When a failure was only replayed from the cache (no live
    call), the exchange is asked again live once: otherwise a rerun would not retry a failed item,
    it would repeat the stored failure.
    """
    answer, live = await _exchange(
        client, messages, conditions, settings, piece=piece, record=record, source=source
    )
    replayed = live == 0 and bool(record.results) and record.results[-1].response is not None
    # a stored cut-off is a fact about the output budget, not a failure worth paying for again
    if answer is None and replayed and not (record.failure or "").endswith(CUT_OFF):
        answer, _ = await _exchange(
            client, messages, conditions, settings, piece=piece, record=record, source=source, refresh=True
        )
    return answer


async def _exchange(
    client: ModelClient,
    messages: list[Message],
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    *,
    piece: bool,
    record: ItemTranslation,
    source: Mapping[str, str] | None = None,
    refresh: bool = False,
) -> tuple[dict[str, object] | None, int]:
    """One ask-and-re-ask round; returns the valid answer (or None) and how many live calls it made."""
    convo = list(messages)
    json_mode = client.capabilities.json_mode
    live = 0
    for attempt in range(settings.max_reasks + 1):
        request = ModelRequest(
            messages=convo,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            response_format="json" if json_mode else "text",
            context={"item_id": record.item_id, "stage": "translate", "attempt": attempt},
        )
        result = await client.call(request, refresh=refresh)
        record.results.append(result)
        live += 0 if result.from_cache else 1
        record.attempts += 0 if result.from_cache else 1
        if result.response is None:
            record.failure = f"translator call failed: {result.error}"
            return None, live
        answer, problem = _check(result, conditions, piece, source)
        if answer is not None:
            return answer, live
        record.failure = f"invalid translator reply after {attempt + 1} attempt(s): {problem}"
        if problem == CUT_OFF:  # asking again with the same output budget cannot help
            return None, live
        convo = [
            *convo,
            Message(role="assistant", content=result.response.text),
            Message(
                role="user",
                content=f"Your reply could not be used: {problem}. Reply again with the JSON object only.",
            ),
        ]
    return None, live


def _check(
    result: CallResult, conditions: Sequence[Condition], piece: bool, source: Mapping[str, str] | None
) -> tuple[dict[str, object] | None, str]:
    """(valid answer, "") or (None, why the answer cannot be used) for an answered call."""
    assert result.response is not None
    if result.response.finish_reason == "length":
        return None, CUT_OFF
    try:
        return validate_answer(result.response.text, conditions, piece=piece, source=source), ""
    except ValueError as exc:
        return None, str(exc)


def piece_budget(settings: TranslatorSettings, conditions: Sequence[Condition]) -> int:
    """Source characters one answer may cover: `piece_chars` is sized for two targets (zh and ls),
    and every target adds a translation of the same text to the answer."""
    return max(200, settings.piece_chars * 2 // max(1, len(conditions)))


def needs_pieces(item: Item, conditions: Sequence[Condition], settings: TranslatorSettings) -> bool:
    """Whether the item is translated field by field, in pieces, rather than in one answer."""
    budget = piece_budget(settings, conditions)
    lengths = [len(getattr(item, f)) for f in TEXT_FIELDS]
    return max(lengths) > budget or sum(lengths) > 2 * budget


def planned_messages(
    item: Item, conditions: Sequence[Condition], settings: TranslatorSettings
) -> list[list[Message]]:
    """The chat prompts a translation of `item` sends when every answer is valid (for estimates)."""
    if not needs_pieces(item, conditions, settings):
        return [item_messages(item, conditions)]
    budget = piece_budget(settings, conditions)
    return [
        piece_messages(piece, conditions)
        for fname in TEXT_FIELDS
        for piece in split_paragraphs(getattr(item, fname), budget)
        if piece.strip()
    ]


async def translate_item_chat(
    client: ModelClient,
    item: Item,
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    source: str,
) -> ItemTranslation:
    """One JSON answer for the whole item, or field by field in pieces when it is too long for one
    answer (predicted from its length, or found when the whole-item reply was cut off)."""
    record = ItemTranslation(item.id)
    texts: dict[str, dict[str, str]] | None = None
    if not needs_pieces(item, conditions, settings):
        fields = {f: getattr(item, f) for f in TEXT_FIELDS}
        messages = item_messages(item, conditions)
        answer = await _ask_json(
            client, messages, conditions, settings, piece=False, record=record, source=fields
        )
        if answer is None and not (record.failure or "").endswith(CUT_OFF):
            return record
        if answer is not None:
            texts = {c.name: dict(answer[c.name]) for c in conditions}  # type: ignore[call-overload]
    if texts is None:
        texts = await _translate_in_pieces(client, item, conditions, settings, record)
        if texts is None:
            return record
    record.failure = None
    for cond in conditions:
        record.variants.append(
            Variant(item_id=item.id, condition=cond.name, source=source, **texts[cond.name])
        )
    return record


async def _translate_in_pieces(
    client: ModelClient,
    item: Item,
    conditions: Sequence[Condition],
    settings: TranslatorSettings,
    record: ItemTranslation,
) -> dict[str, dict[str, str]] | None:
    texts: dict[str, dict[str, str]] = {c.name: {} for c in conditions}
    budget = piece_budget(settings, conditions)
    for fname in TEXT_FIELDS:
        parts: dict[str, list[str]] = {c.name: [] for c in conditions}
        for piece in split_paragraphs(getattr(item, fname), budget):
            if not piece.strip():
                for cond in conditions:
                    parts[cond.name].append(piece)
                continue
            answer = await _ask_json(
                client, piece_messages(piece, conditions), conditions, settings, piece=True, record=record
            )
            if answer is None:
                record.failure = f"{fname}: {record.failure}"
                return None
            for cond in conditions:
                parts[cond.name].append(_rejoin(piece, str(answer[cond.name])))
        for cond in conditions:
            texts[cond.name][fname] = "".join(parts[cond.name])
    return texts


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
                    # a translation needs about a token per source character at most; a base model
                    # that starts repeating itself is stopped there rather than at the global limit
                    max_tokens=min(settings.max_tokens, max(48, len(piece))),
                    stop=stops,
                    context={"item_id": item.id, "stage": "translate", "field": fname},
                )
                result = await client.call(request)
                if result.from_cache and result.response is not None and not result.response.text.strip():
                    result = await client.call(request, refresh=True)  # retry, do not replay, a failure
                record.results.append(result)
                record.attempts += 0 if result.from_cache else 1
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
