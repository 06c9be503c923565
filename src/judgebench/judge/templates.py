"""Judge prompt templates: TOML files in configs/templates/ with their answer format.

A template has a chat form (system + user) and optionally a completion form for base models (the
embedded `local` model never sees a chat template). Its hash goes into every judgment and the
manifest, so a number can be traced to the exact prompt that produced it.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgebench.config.load import read_config, validate_config
from judgebench.config.paths import configs_dir
from judgebench.models.base import Message, ModelRequest

AnswerFormat = Literal["json", "letter", "patterns"]
ReplyField = Literal["winner", "confidence", "reason"]
PLACEHOLDERS = {"instruction", "output_a", "output_b", "condition_note"}
DEFAULT_REPLY_FIELDS: tuple[ReplyField, ...] = ("winner", "confidence", "reason")
# Keys added after templates were first hashed: left out of the digest while they hold their
# defaults, so a template that does not use them keeps the hash its runs recorded.
_LATER_KEYS = {"structured_output": False, "reply_fields": list(DEFAULT_REPLY_FIELDS)}


class JudgeTemplate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    answer_format: AnswerFormat = "json"
    allow_tie: bool = True
    tell_condition: bool = False
    condition_note: str = ""
    system: str | None = None
    user: str
    a_patterns: list[str] = []
    b_patterns: list[str] = []
    tie_patterns: list[str] = []
    completion: str | None = None
    completion_file: str | None = None
    completion_answer_format: AnswerFormat = "letter"
    max_tokens: int = Field(default=900, ge=1)
    # Structured output: ask the provider to hold the reply to `verdict_schema()` (the winner one of
    # the allowed labels, the `reply_fields` and nothing else) where it offers schema-constrained
    # output; elsewhere the request falls back to JSON mode and the parser reads the reply as before.
    structured_output: bool = False
    reply_fields: list[ReplyField] = list(DEFAULT_REPLY_FIELDS)

    @model_validator(mode="after")
    def _check(self) -> JudgeTemplate:
        for label, text in (
            ("user", self.user),
            ("system", self.system or ""),
            ("completion", self.completion or ""),
        ):
            for field in _fields(text):
                if field not in PLACEHOLDERS:
                    raise ValueError(
                        f"{label}: unknown placeholder {{{field}}}; allowed: {sorted(PLACEHOLDERS)}"
                    )
        if "{output_a}" not in self.user or "{output_b}" not in self.user:
            raise ValueError("user: must contain {output_a} and {output_b}")
        if self.answer_format == "patterns" and not (self.a_patterns and self.b_patterns):
            raise ValueError("answer_format 'patterns' needs a_patterns and b_patterns")
        if self.structured_output and self.answer_format != "json":
            raise ValueError("structured_output needs answer_format 'json' (the schema is a JSON object)")
        if "winner" not in self.reply_fields or len(set(self.reply_fields)) != len(self.reply_fields):
            raise ValueError("reply_fields: must name 'winner', each field once")
        return self

    def digest(self) -> str:
        """The template's hash as recorded in the manifest: its text and the way candidates are
        delimited (`DELIMITING`), so the recorded hash names the prompt actually rendered."""
        fields = self.model_dump()
        for key, default in _LATER_KEYS.items():
            if fields[key] == default:
                del fields[key]
        blob = json.dumps({**fields, "delimiting": DELIMITING}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def labels(self) -> list[str]:
        """The verdict labels a reply may give."""
        return ["A", "B", "Tie"] if self.allow_tie else ["A", "B"]

    def verdict_schema(self) -> dict[str, Any]:
        """The JSON Schema of a reply: an object with exactly `reply_fields`, the winner one of
        `labels()`. Strict-mode compatible (every property required, no other property allowed)."""
        kinds: dict[str, dict[str, Any]] = {
            "winner": {"type": "string", "enum": self.labels()},
            "confidence": {"type": "number"},
            "reason": {"type": "string"},
        }
        return {
            "type": "object",
            "properties": {name: kinds[name] for name in self.reply_fields},
            "required": list(self.reply_fields),
            "additionalProperties": False,
        }

    def note_for(self, language: str | None) -> str:
        if not self.tell_condition or not language:
            return ""
        return self.condition_note.replace("{language}", language)

    def render(
        self,
        *,
        instruction: str,
        output_a: str,
        output_b: str,
        language: str | None,
        completion: bool,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        want_logprobs: bool = False,
    ) -> ModelRequest:
        """Fill the template. Candidate texts are substituted once, never re-parsed as a template; in
        the chat form each sits between boundary lines it cannot forge (`fence`)."""
        values = {
            "instruction": instruction,
            "output_a": output_a,
            "output_b": output_b,
            "condition_note": self.note_for(language),
        }
        if completion and self.completion:
            return ModelRequest(
                prompt=_fill(self.completion, values),
                temperature=temperature,
                max_tokens=2,
                logprobs=want_logprobs,
                top_logprobs=20 if want_logprobs else None,
            )
        messages = []
        if self.system:
            messages.append(Message(role="system", content=_fill(self.system, values)))
        fenced = dict(values, **fence(instruction, output_a, output_b))
        messages.append(Message(role="user", content=_fill(self.user, fenced).lstrip("\n")))
        return ModelRequest(
            messages=messages,
            temperature=temperature,
            max_tokens=max_tokens or self.max_tokens,
            response_format="json" if self.answer_format == "json" else "text",
            response_schema=self.verdict_schema() if self.structured_output else None,
            logprobs=want_logprobs,
            top_logprobs=5 if want_logprobs else None,
        )

    def format_for(self, completion: bool) -> AnswerFormat:
        return self.completion_answer_format if completion and self.completion else self.answer_format


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# How `fence` marks candidate texts; part of every template's digest (change it when `fence` changes).
DELIMITING = "boundary-lines-v1"
_FENCED = {"instruction": "INSTRUCTION", "output_a": "RESPONSE A", "output_b": "RESPONSE B"}


def boundary(instruction: str, output_a: str, output_b: str) -> str:
    """The code on a call's boundary lines: a hash of the three texts, so no candidate can write it
    (it would have to contain the hash of itself), yet the same call always renders the same prompt
    (the cache and a resumed run need that; a random marker would pay for every call again)."""
    blob = "\x1f".join((instruction, output_a, output_b)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()[:16]


def fence(instruction: str, output_a: str, output_b: str) -> dict[str, str]:
    """The instruction and both candidates, each between a BEGIN and an END line carrying this call's
    `boundary` code. A candidate that writes its own `[Response B]` heading, a closing question or
    a fake END line stays inside its own section: only the lines with the code delimit it."""
    code = boundary(instruction, output_a, output_b)
    texts = {"instruction": instruction, "output_a": output_a, "output_b": output_b}
    return {
        name: f"<<<BEGIN {label} {code}>>>\n{texts[name]}\n<<<END {label} {code}>>>"
        for name, label in _FENCED.items()
    }


def _fields(text: str) -> list[str]:
    """`{name}` placeholders; JSON braces such as {"winner": ...} in a template are left alone."""
    return _PLACEHOLDER.findall(text)


def _fill(template: str, values: dict[str, str]) -> str:
    # One pass over the template only: values are inserted verbatim, so a candidate output that
    # contains "{instruction}" or "{output_b}" is never expanded.
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def default_template_path() -> Path:
    return configs_dir() / "templates" / "judge_default.toml"


def load_template(path: str | Path | None = None) -> JudgeTemplate:
    """Load and validate a template file; errors name the file and the bad key."""
    file = Path(path) if path is not None else default_template_path()
    data, text = read_config(file)
    completion_file = data.get("completion_file")
    if completion_file and not data.get("completion"):
        completion_path = (file.parent / str(completion_file)).resolve()
        if completion_path.exists():
            data["completion"] = completion_path.read_text(encoding="utf-8")
    return validate_config(data, JudgeTemplate, path=file, text=text)
