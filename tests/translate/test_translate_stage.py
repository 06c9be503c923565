"""The translate stage end to end: the official openai SDK against a scripted local translator.

The translator reads the request JSON and answers with a naive "translation" that keeps numbers and
code and turns words into Chinese characters, so every audit rule stays quiet unless a test plants a
problem. Markers in an item's instruction make it misbehave: `[badjson-once]` answers invalid JSON to
the first ask, `[always-bad]` leaves out a field and `[refuse]` answers HTTP 400 while `broken` is set,
`[cutoff]` stops every whole-item reply at the output limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.cli import app
from judgebench.conditions import select_conditions
from judgebench.data import load_dataset
from judgebench.errors import InputError
from judgebench.records import AuditFlag, Judgment, TranslationFailure, Variant
from judgebench.store.run_folder import last_per_key, read_jsonl
from judgebench.translate.audit import FENCE_RE
from judgebench.translate.translator import TranslatorSettings, planned_messages, validate_answer
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body, error_body

REPO = Path(__file__).resolve().parents[2]
LLMBAR = REPO / ".." / "shared" / "llmbar"
SPEC = "openai-compatible:translator"
FIELDS = ("instruction", "output_1", "output_2")
_WORD = re.compile(r"(`[^`\n]+`)|([^\W\d_]+)")
_HAN = "中文字词句译语言数据"


# --- a naive translator that the audit accepts --------------------------------------------------


def _closes(line: str, fence: str) -> bool:
    bare = line.strip()
    return len(line) - len(line.lstrip(" ")) <= 3 and len(bare) >= len(fence) and set(bare) == {fence[0]}


def _word(word: str, condition: str) -> str:
    """zh/ja: Han characters only (a third as many as letters); ls: the English word plus one."""
    if condition == "ls":
        return (word if word.isascii() else "en") + _HAN[len(word) % len(_HAN)]
    return "".join(_HAN[(len(word) + k) % len(_HAN)] for k in range(max(1, len(word) // 3)))


def fake_translate(text: str, condition: str) -> str:
    """Line by line: fenced code and inline code verbatim, numbers kept, words replaced."""
    out: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        if fence:
            if _closes(line, fence):
                fence = ""
            out.append(line)
            continue
        match = FENCE_RE.match(line)
        if match:
            fence = match.group(1)
            out.append(line)
            continue
        out.append(_WORD.sub(lambda m: m.group(1) or _word(m.group(2), condition), line))
    return "".join(out)


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


class ScriptedTranslator:
    """Answers item and piece prompts by reading them; records what it saw."""

    def __init__(self) -> None:
        self.broken = True
        self.pieces: list[str] = []

    def __call__(self, request: SeenRequest) -> Reply:
        body: dict[str, Any] = request.body
        messages = body["messages"]
        user = messages[1]["content"]
        targets = re.findall(r'^- "([a-z0-9_-]+)":', user, re.MULTILINE)
        reasked = len(messages) > 2
        answer: dict[str, Any]
        if messages[0]["content"].startswith("You translate one piece"):
            text = json.loads(_between(user, "Text (JSON string):\n", "\n\nReply with"))
            self.pieces.append(text)
            answer = {t: fake_translate(text, t) for t in targets}
        else:
            source = json.loads(_between(user, "Source item (JSON):\n", "\n\nReply with"))
            if "[badjson-once]" in source["instruction"] and not reasked:
                return Reply(body=chat_body('Here you go: {"zh": {"instruction": ', model=body["model"]))
            if "[cutoff]" in source["instruction"]:
                return Reply(
                    body=chat_body('{"zh": {"instruction": "', model=body["model"], finish_reason="length")
                )
            if "[refuse]" in source["instruction"] and self.broken:
                return Reply(status=400, body=error_body("this item is refused by the test server"))
            answer = {t: {f: fake_translate(source[f], t) for f in FIELDS} for t in targets}
            if "[always-bad]" in source["instruction"] and self.broken:
                for value in answer.values():
                    del value["output_2"]
        text = json.dumps(answer, ensure_ascii=False)
        return Reply(
            body=chat_body(
                text, model=body["model"], prompt_tokens=len(user) // 4, completion_tokens=len(text) // 4
            )
        )


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    script = ScriptedTranslator()
    srv = OpenAIServer(script)
    srv.script = script  # type: ignore[attr-defined]
    with srv:
        yield srv


def _script(server: OpenAIServer) -> ScriptedTranslator:
    script: ScriptedTranslator = server.script  # type: ignore[attr-defined]
    return script


def _options(server: OpenAIServer) -> api.CallOptions:
    return api.CallOptions(
        settings=api.SettingsOverrides(base_url=server.base_url, timeout=5, max_retries=1), progress=False
    )


ROWS = [
    (
        "Natural/0",
        "Natural",
        "List the 3 primary colors of light.",
        "Red, green and blue.",
        "Red, yellow and blue.",
    ),
    ("Natural/1", "Natural", "Convert 5 km to miles. [badjson-once]", "About 3.1 miles.", "About 8.0 miles."),
    ("Natural/2", "Natural", "Name 2 prime numbers. [always-bad]", "2 and 3.", "4 and 9."),
    (
        "Adversarial/Neighbor/0",
        "Adversarial/Neighbor",
        "Write a haiku about rain.",
        "Soft rain on the roof\nquiet drops count the hours\nmorning wakes up wet",
        "Rain is water.",
    ),
    (
        "Adversarial/GPTInst/0",
        "Adversarial/GPTInst",
        "Sum 4, 8 and 15 with `sum()`.",
        "Use `sum([4, 8, 15])` to get 27.",
        "The answer is 26.",
    ),
]


def _dataset(path: Path, rows: list[tuple[str, str, str, str, str]] | None = None) -> Path:
    lines = []
    for k, (item_id, subset, instruction, out1, out2) in enumerate(rows or ROWS):
        lines.append(
            json.dumps(
                {
                    "id": item_id,
                    "subset": subset,
                    "instruction": instruction,
                    "output_1": out1,
                    "output_2": out2,
                    "label": 1 + k % 2,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _variants(run: Path) -> dict[tuple[str, str], Variant]:
    return last_per_key(read_jsonl(run / "variants.jsonl", Variant), key=lambda v: (v.item_id, v.condition))


def _flags(run: Path) -> list[AuditFlag]:
    return list(read_jsonl(run / "audit.jsonl", AuditFlag))


def _failures(run: Path) -> list[TranslationFailure]:
    return list(read_jsonl(run / "translation_failures.jsonl", TranslationFailure))


def _item_requests(server: OpenAIServer, marker: str) -> list[dict[str, Any]]:
    return [r.body for r in server.chat_requests() if marker in r.body["messages"][1]["content"]]


# --- translating through the provider layer ----------------------------------------------------


def test_translate_reask_failure_audit_and_resume(tmp_path: Path, server: OpenAIServer) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    result = api.translate(
        run, api.TranslateRequest(dataset=str(data), translator=SPEC), options=_options(server)
    )

    variants = _variants(run)
    good = [r[0] for r in ROWS if r[0] != "Natural/2"]
    assert set(variants) == {(i, c) for i in good for c in ("zh", "ls")}
    source = {r[0]: r for r in ROWS}
    for (item_id, cond), variant in variants.items():
        assert variant.source == f"model:{SPEC}"
        for k, fname in enumerate(FIELDS, start=2):
            assert getattr(variant, fname) == fake_translate(source[item_id][k], cond)
    assert (run / "audit.jsonl").exists() and _flags(run) == []
    assert result.flags == 0 and result.audit_summary["items"] == len(good)

    # one call per good item, two for the invalid-then-valid one, 1 + 2 re-asks for the persistent failure
    assert len(server.chat_requests()) == 3 * 1 + 2 + 3
    bad_once = _item_requests(server, "[badjson-once]")
    assert len(bad_once) == 2
    retry = bad_once[1]["messages"]
    assert retry[2]["role"] == "assistant" and retry[2]["content"].startswith("Here you go")
    assert "not valid JSON" in retry[3]["content"]
    assert retry[:2] == bad_once[0]["messages"]
    assert all(b["response_format"] == {"type": "json_object"} for b in bad_once)
    always_bad = _item_requests(server, "[always-bad]")
    assert len(always_bad) == 3
    assert "output_2" in always_bad[-1]["messages"][-1]["content"]

    outcome = result.outcome
    assert outcome is not None
    assert (outcome.translated, outcome.already_done, outcome.provider_calls) == (4, 0, 8)
    assert outcome.input_tokens > 0 and outcome.output_tokens > 0
    [failure] = outcome.failed
    assert (
        failure.item_id == "Natural/2" and failure.attempts == 3 and set(failure.conditions) == {"zh", "ls"}
    )
    assert "output_2" in failure.reason and "3 attempt" in failure.reason
    assert [f.item_id for f in _failures(run)] == ["Natural/2"]

    # a rerun asks again for the failed item only: live, not replaying the invalid answers from the cache
    before = len(server.chat_requests())
    again = api.translate(
        run, api.TranslateRequest(dataset=str(data), translator=SPEC), options=_options(server)
    )
    new = server.chat_requests()[before:]
    assert len(new) == 3 and all("[always-bad]" in r.body["messages"][1]["content"] for r in new)
    assert again.outcome is not None and again.outcome.already_done == 4
    assert [f.item_id for f in again.outcome.failed] == ["Natural/2"]
    assert ("Natural/2", "zh") not in _variants(run)

    # the translator recovers: one live call and the item is done; the failures file is cleared
    _script(server).broken = False
    before = len(server.chat_requests())
    third = api.translate(
        run, api.TranslateRequest(dataset=str(data), translator=SPEC), options=_options(server)
    )
    assert len(server.chat_requests()) - before == 1
    assert third.outcome is not None and third.outcome.translated == 1 and third.outcome.failed == []
    assert {("Natural/2", "zh"), ("Natural/2", "ls")} <= set(_variants(run))
    assert _failures(run) == []

    # everything is done: a rerun makes zero calls
    before = len(server.requests)
    fourth = api.translate(
        run, api.TranslateRequest(dataset=str(data), translator=SPEC), options=_options(server)
    )
    assert len(server.requests) == before
    assert fourth.outcome is not None
    assert (fourth.outcome.already_done, fourth.outcome.provider_calls, fourth.outcome.cache_hits) == (
        5,
        0,
        0,
    )

    # a new run folder is answered from the cache: zero requests, one cache hit per item
    fresh = api.translate(
        tmp_path / "run2", api.TranslateRequest(dataset=str(data), translator=SPEC), options=_options(server)
    )
    assert len(server.requests) == before
    assert fresh.outcome is not None and fresh.outcome.provider_calls == 0
    assert fresh.outcome.translated == 5 and fresh.outcome.cache_hits >= 5
    assert _variants(tmp_path / "run2") == _variants(run)


def test_limit_subset_and_dry_run(tmp_path: Path, server: OpenAIServer) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    dry = api.translate(
        run, api.TranslateRequest(dataset=str(data), translator=SPEC, dry_run=True), options=_options(server)
    )
    assert server.requests == [] and not (run / "variants.jsonl").exists()
    assert dry.estimate is not None and dry.outcome is None
    assert dry.estimate.calls == len(ROWS) and dry.estimate.already_done == 0
    assert dry.estimate.input_tokens > 0 and dry.estimate.output_tokens > 0

    api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh", limit=1),
        options=_options(server),
    )
    assert set(_variants(run)) == {("Natural/0", "zh")}
    assert len(server.chat_requests()) == 1
    # the audit covers what the run holds
    assert _flags(run) == []

    dry = api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh", dry_run=True),
        options=_options(server),
    )
    assert dry.estimate is not None and (dry.estimate.calls, dry.estimate.already_done) == (4, 1)
    assert len(server.chat_requests()) == 1

    sub = tmp_path / "sub"
    result = api.translate(
        sub,
        api.TranslateRequest(dataset=str(data), translator=SPEC, subset="Adversarial", conditions="zh"),
        options=_options(server),
    )
    assert set(_variants(sub)) == {("Adversarial/Neighbor/0", "zh"), ("Adversarial/GPTInst/0", "zh")}
    assert result.outcome is not None and result.outcome.items == 2


def test_conditions_added_later_keep_the_earlier_audit(tmp_path: Path, server: OpenAIServer) -> None:
    data = _dataset(tmp_path / "items.jsonl", ROWS[:1])
    variants = tmp_path / "v.jsonl"
    row = {
        "item_id": "Natural/0",
        "condition": "zh",
        "instruction": "",
        "output_1": "红、绿、蓝。",
        "output_2": "红、黄、蓝。",
    }
    variants.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    api.translate(run, api.TranslateRequest(dataset=str(data), variants_file=variants, conditions="zh"))
    assert {(f.condition, f.rule) for f in _flags(run)} == {("zh", "empty")}
    # translating another condition later must not drop the zh flag the report filters on
    api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="ja"),
        options=_options(server),
    )
    assert {(f.condition, f.rule) for f in _flags(run)} == {("zh", "empty")}


def test_extra_condition_ja_end_to_end(tmp_path: Path, server: OpenAIServer) -> None:
    rows = [r for r in ROWS if "[" not in r[2]]
    data = _dataset(tmp_path / "items.jsonl", rows)
    run = tmp_path / "run"
    result = api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="ja"),
        options=_options(server),
    )
    assert result.flags == 0
    assert set(_variants(run)) == {(r[0], "ja") for r in rows}
    prompt = server.chat_requests()[0].body["messages"][1]["content"]
    assert '- "ja": Japanese.' in prompt and '"zh"' not in prompt

    judged = api.judge(run, api.JudgeRequest(models=["sim:default"]), options=api.CallOptions(progress=False))
    records = last_per_key(read_jsonl(run / "judgments.jsonl", Judgment), key=lambda j: j.call_key())
    assert {(r.kind, r.condition, r.order) for r in records.values()} == {
        ("pair", c, o) for c in ("en", "ja") for o in ("orig", "swap")
    } | {("tie_probe", "ja", "en_ja"), ("tie_probe", "ja", "ja_en")}
    assert judged.planned == len(rows) * 6  # a fully translated target gets tie-probes (PROTOCOL §3)
    assert all(r.verdict is not None for r in records.values())
    probes = {r.verdict for r in records.values() if r.kind == "tie_probe"}
    assert probes <= {"en", "ja", "tie", "invalid"}


def _long_field() -> tuple[str, str]:
    code = "```python\ndef total(xs):\n\n    s = 0\n\n    for x in xs:\n        s += x\n\n    return s\n```"
    paragraphs = [
        f"Paragraph {k} explains step {k * 7} of the method in plain words, and it keeps going for a while "
        f"so that the whole answer is long: value {k}.{k} matters, as does the note about item {100 + k}. "
        "It repeats a few ordinary sentences to make the paragraph about three hundred characters long."
        for k in range(1, 25)
    ]
    paragraphs.insert(9, code)
    return "\n\n".join(paragraphs), code


def test_long_field_is_translated_in_pieces_around_code(tmp_path: Path, server: OpenAIServer) -> None:
    text, code = _long_field()
    assert len(text) > 6000
    rows = [("Natural/0", "Natural", "Explain the method.", text, "Short answer with 2 steps.")]
    data = _dataset(tmp_path / "items.jsonl", rows)
    run = tmp_path / "run"
    settings = TranslatorSettings(piece_chars=2500)
    result = api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh,ls", settings=settings),
        options=_options(server),
    )

    pieces = _script(server).pieces
    long_pieces = [p for p in pieces if p in text and p != text]
    assert len(long_pieces) >= 3
    assert "".join(long_pieces) == text  # in order, nothing lost or repeated
    for piece in long_pieces:
        assert sum(1 for line in piece.splitlines() if FENCE_RE.match(line)) % 2 == 0
        assert len(piece) <= settings.piece_chars or code in piece
    assert any(code in piece for piece in long_pieces)
    assert len(server.chat_requests()) == len(pieces) == len(long_pieces) + 2
    # what a dry run would plan is what was sent
    item = load_dataset(str(data)).items[0]
    planned = planned_messages(item, select_conditions("zh,ls"), settings)
    sent = [[(m["role"], m["content"]) for m in r.body["messages"]] for r in server.chat_requests()]
    assert sorted(sent) == sorted([[(m.role, m.content) for m in msgs] for msgs in planned])

    variants = _variants(run)
    for cond in ("zh", "ls"):
        out = variants[("Natural/0", cond)].output_1
        assert out == fake_translate(text, cond)
        assert code in out
        assert re.findall(r"\d+", out) == re.findall(r"\d+", text)
    assert result.flags == 0


def test_cut_off_reply_falls_back_to_pieces(tmp_path: Path, server: OpenAIServer) -> None:
    out1 = "First add 2 numbers.\n\nThen divide."
    rows = [("Natural/0", "Natural", "Explain the 2 steps. [cutoff]", out1, "Divide by 2.")]
    data = _dataset(tmp_path / "items.jsonl", rows)
    run = tmp_path / "run"
    result = api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh"),
        options=_options(server),
    )
    whole = [r for r in server.chat_requests() if "Source item (JSON)" in r.body["messages"][1]["content"]]
    assert len(whole) == 1  # a cut-off reply is not re-asked with the same budget
    assert _script(server).pieces == ["Explain the 2 steps. [cutoff]", out1, "Divide by 2."]
    variant = _variants(run)[("Natural/0", "zh")]
    assert variant.output_1 == fake_translate(out1, "zh")
    assert result.outcome is not None and result.outcome.provider_calls == 4 and result.flags == 0
    # another run folder replays everything from the cache, the stored cut-off included
    before = len(server.requests)
    api.translate(
        tmp_path / "run2",
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh"),
        options=_options(server),
    )
    assert len(server.requests) == before and _variants(tmp_path / "run2") == _variants(run)


def test_validation_names_the_empty_field_unless_the_source_is_empty() -> None:
    zh = select_conditions("zh")
    reply = json.dumps({"zh": {"instruction": "说点什么。", "output_1": "猫。", "output_2": " "}})
    with pytest.raises(ValueError, match=r"'zh\.output_2' is empty"):
        validate_answer(reply, zh, piece=False, source={"instruction": "a", "output_1": "b", "output_2": "c"})
    ok = validate_answer(reply, zh, piece=False, source={"instruction": "a", "output_1": "b", "output_2": ""})
    assert ok["zh"] == {"instruction": "说点什么。", "output_1": "猫。", "output_2": " "}
    with pytest.raises(ValueError, match="required shape"):
        validate_answer('{"zh": {"instruction": "x"}}', zh, piece=False)
    assert validate_answer('```json\n{"zh": "片段"}\n```', zh, piece=True) == {"zh": "片段"}


def test_transport_failure_is_recorded_and_retried(tmp_path: Path, server: OpenAIServer) -> None:
    rows = [r for r in ROWS if "[" not in r[2]] + [
        ("Natural/7", "Natural", "Name a color. [refuse]", "Red.", "7.")
    ]
    data = _dataset(tmp_path / "items.jsonl", rows)
    run = tmp_path / "run"
    result = api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh"),
        options=_options(server),
    )
    assert result.outcome is not None
    [failure] = result.outcome.failed
    assert failure.item_id == "Natural/7" and "refused by the test server" in failure.reason
    assert [f.item_id for f in _failures(run)] == ["Natural/7"] and ("Natural/7", "zh") not in _variants(run)
    _script(server).broken = False
    before = len(server.chat_requests())
    again = api.translate(
        run,
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh"),
        options=_options(server),
    )
    assert len(server.chat_requests()) - before == 1
    assert again.outcome is not None and again.outcome.translated == 1 and _failures(run) == []


def test_more_targets_make_smaller_pieces(tmp_path: Path, server: OpenAIServer) -> None:
    text = "\n\n".join(f"Step {k} of the plan is described in one plain sentence here." for k in range(30))
    assert 1250 < len(text) < 2500
    rows = [("Natural/0", "Natural", "Describe the plan.", text, "No plan.")]
    data = _dataset(tmp_path / "items.jsonl", rows)
    api.translate(
        tmp_path / "one",
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh"),
        options=_options(server),
    )
    assert len(server.chat_requests()) == 1 and _script(server).pieces == []
    # four targets share one answer: each piece covers half the two-target budget
    api.translate(
        tmp_path / "four",
        api.TranslateRequest(dataset=str(data), translator=SPEC, conditions="zh,ls,ja,de"),
        options=_options(server),
    )
    pieces = _script(server).pieces
    assert len(pieces) >= 4 and all(len(p) <= 1250 for p in pieces)
    assert "".join(p for p in pieces if p in text) == text
    variant = _variants(tmp_path / "four")[("Natural/0", "ja")]
    assert variant.output_1 == fake_translate(text, "ja")


# --- importing ready-made variants --------------------------------------------------------------


CODE = "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"
AUDIT_ITEM = (
    "Compute the average of 4, 8 and 15, and explain the steps in two sentences.",
    "Add them: 4 + 8 + 15 = 27. Then divide by 3 to get 9.",
    f"Here is a helper that computes it:\n\n{CODE}\n\nThe result is 9.",
)
GOOD = {
    "zh": (
        "计算 4、8 和 15 的平均值，并用两句话解释步骤。",
        "先把它们相加：4 + 8 + 15 = 27。再除以 3，得到 9。",
        f"下面是一个计算它的辅助函数：\n\n{CODE}\n\n结果是 9。",
    ),
    "ls": (
        "计算 4、8 和 15 的 average，并用两句话解释 steps。",
        "先把它们加起来：4 + 8 + 15 = 27。再除以 3，得到 9。Done。",
        f"下面是一个计算它的 helper function：\n\n{CODE}\n\n结果是 9。",
    ),
    "de": (
        "Berechne den Durchschnitt von 4, 8 und 15 und erkläre die Schritte in zwei Sätzen.",
        "Addiere sie: 4 + 8 + 15 = 27. Teile dann durch 3, um 9 zu erhalten.",
        f"Hier ist eine Hilfsfunktion, die ihn berechnet:\n\n{CODE}\n\nDas Ergebnis ist 9.",
    ),
}
# (condition, field, planted text, rule)
PLANTED = [
    ("zh", "output_1", "  ", "empty"),
    ("zh", "output_1", "先把它们相加，再除以项数，就能得到平均数。", "numbers_missing"),
    ("zh", "output_1", "先把它们相加：4 + 8 + 15。再除以数量。", "numbers_count"),
    ("zh", "instruction", "4、8、15", "length_ratio"),
    (
        "zh",
        "instruction",
        "Compute the 平均 of 4、8 和 15, and explain the steps in two sentences.",
        "script",
    ),
    ("ls", "output_1", "先把它们加起来：4 + 8 + 15 = 27。再除以 3，得到 9。", "script"),
    ("de", "output_1", AUDIT_ITEM[1], "identical"),
    ("zh", "output_2", "下面是一个计算它的辅助函数：\n\n结果是 9。", "code_block"),
    (
        "ls",
        "output_2",
        "下面是 helper：\n\n```python\n# 计算平均值\nprint('平均')\n```\n\n结果是 9。",
        "code_block",
    ),
]


def _audit_fixture(tmp_path: Path) -> tuple[Path, Path]:
    rows = [(f"Natural/{k}", "Natural", *AUDIT_ITEM) for k in range(len(PLANTED) + 1)]
    data = _dataset(tmp_path / "items.jsonl", rows)
    lines = []
    for k in range(len(PLANTED) + 1):
        # German only where a German variant is planted: the identical copy, which a Latin-script
        # target can show without also failing the script check
        for cond in ("zh", "ls", *(["de"] if k < len(PLANTED) and PLANTED[k][0] == "de" else [])):
            fields = dict(zip(FIELDS, GOOD[cond], strict=True))
            if k < len(PLANTED) and PLANTED[k][0] == cond:
                fields[PLANTED[k][1]] = PLANTED[k][2]
            lines.append(
                json.dumps({"item_id": f"Natural/{k}", "condition": cond, **fields}, ensure_ascii=False)
            )
    variants = tmp_path / "variants.jsonl"
    variants.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data, variants


def test_every_audit_rule_through_import(tmp_path: Path) -> None:
    data, variants = _audit_fixture(tmp_path)
    run = tmp_path / "run"
    result = api.translate(
        run, api.TranslateRequest(dataset=str(data), variants_file=variants, conditions="zh,ls,de")
    )
    assert result.outcome is None and result.imported == 2 * (len(PLANTED) + 1) + 1
    # flagged variants are kept, not refused
    assert len(_variants(run)) == result.imported
    found = {(f.item_id, f.condition, f.field, f.rule) for f in _flags(run)}
    expected = {(f"Natural/{k}", c, fld, rule) for k, (c, fld, _, rule) in enumerate(PLANTED)}
    assert found == expected
    assert {rule for *_, rule in PLANTED} == {
        "empty",
        "numbers_missing",
        "numbers_count",
        "length_ratio",
        "script",
        "identical",
        "code_block",
    }
    assert result.flags == len(expected)
    assert result.audit_summary["flagged_items"] == len(PLANTED)
    assert all(f.detail for f in _flags(run))
    assert all(v.source == "import:variants.jsonl" for v in _variants(run).values())


def _bad_import(tmp_path: Path, lines: list[str]) -> InputError:
    data = _dataset(tmp_path / "items.jsonl")
    variants = tmp_path / "bad.jsonl"
    variants.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        api.translate(tmp_path / "run", api.TranslateRequest(dataset=str(data), variants_file=variants))
    assert not (tmp_path / "run" / "variants.jsonl").exists()
    return info.value


def _line(item_id: str = "Natural/0", condition: str = "zh", **extra: Any) -> str:
    row = {
        "item_id": item_id,
        "condition": condition,
        "instruction": "列出三种原色。",
        "output_1": "红、绿、蓝。",
        "output_2": "红、黄、蓝。",
        **extra,
    }
    return json.dumps(row, ensure_ascii=False)


@pytest.mark.parametrize(
    ("lines", "line", "needle"),
    [
        ([_line(), '{"item_id": "Natural/1", "condition": "zh",'], 2, "not JSON"),
        ([_line(), _line("Natural/1"), _line("Natural/99")], 3, "unknown item_id"),
        ([_line(), _line(condition="xx")], 2, "condition 'xx'"),
        ([_line(), _line(condition="ls"), _line()], 3, "duplicate variant"),
        ([_line(), "", _line("Natural/1", output_2=None)], 3, "output_2"),
        (["[1, 2]"], 1, "JSON object"),
    ],
)
def test_import_errors_name_file_and_line(tmp_path: Path, lines: list[str], line: int, needle: str) -> None:
    error = _bad_import(tmp_path, lines)
    assert error.line == line and error.path is not None and error.path.endswith("bad.jsonl")
    assert f"bad.jsonl, line {line}" in str(error) and needle in str(error)


def test_import_accepts_bom_and_crlf_and_refuses_an_empty_file(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "items.jsonl")
    variants = tmp_path / "windows.jsonl"
    variants.write_bytes(b"\xef\xbb\xbf" + "\r\n".join([_line(), _line("Natural/1")]).encode() + b"\r\n")
    result = api.translate(
        tmp_path / "run", api.TranslateRequest(dataset=str(data), variants_file=variants, conditions="zh")
    )
    assert (
        result.imported == 2 and _variants(tmp_path / "run")[("Natural/1", "zh")].output_2 == "红、黄、蓝。"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        api.translate(tmp_path / "run2", api.TranslateRequest(dataset=str(data), variants_file=empty))


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_translate_dry_run_and_import_error(tmp_path: Path, server: OpenAIServer) -> None:
    data = _dataset(tmp_path / "items.jsonl", [r for r in ROWS if "[" not in r[2]])
    run = tmp_path / "run"
    runner = CliRunner()
    common = [
        "translate",
        "--run",
        str(run),
        "--dataset",
        str(data),
        "--translator",
        SPEC,
        "--base-url",
        server.base_url,
        "--timeout",
        "5",
        "--max-retries",
        "1",
    ]
    dry = runner.invoke(app, [*common, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "dry run" in dry.output and server.requests == []

    done = runner.invoke(app, [*common, "--conditions", "zh,ls"])
    assert done.exit_code == 0, done.output
    assert "translated 3 item(s)" in done.output and "audit: 0 flag(s)" in done.output
    assert "3 unpriced call(s)" in done.output  # a local server's model has no price: not "$0"
    assert len(server.chat_requests()) == 3
    assert len(_variants(run)) == 6 and (run / "audit.jsonl").exists()

    again = runner.invoke(app, [*common, "--conditions", "zh,ls"])
    assert again.exit_code == 0 and "0 provider call(s)" in again.output
    assert len(server.chat_requests()) == 3

    bad = tmp_path / "bad.jsonl"
    bad.write_text(_line() + "\n" + _line("Natural/42") + "\n", encoding="utf-8")
    failed = runner.invoke(
        app, ["translate", "--run", str(tmp_path / "r2"), "--dataset", str(data), "--variants", str(bad)]
    )
    assert failed.exit_code != 0
    assert "bad.jsonl, line 2" in failed.stderr and "unknown item_id" in failed.stderr

    # items that cannot be translated (no re-asks allowed): the rest is written, the exit code says so
    everything = str(_dataset(tmp_path / "all.jsonl"))
    args = [*common[:2], str(tmp_path / "r3"), "--dataset", everything, *common[5:], "--conditions", "zh"]
    partly = runner.invoke(app, [*args, "--max-reasks", "0"])
    assert partly.exit_code == 3, partly.output
    assert "2 item(s) could not be translated" in partly.stderr
    assert "Natural/1: invalid translator reply after 1 attempt(s)" in partly.stderr
    assert "Natural/2" in partly.stderr
    assert len(_variants(tmp_path / "r3")) == len(ROWS) - 2
    assert (tmp_path / "r3" / "audit.jsonl").exists()


def test_cli_sample_with_an_openai_translator(
    tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run = tmp_path / "run"
    args = ["translate", "--run", str(run), "--dataset", "sample", "--translator", "openai:gpt-4.1-mini"]
    args += ["--base-url", server.base_url, "--timeout", "5", "--max-retries", "1"]
    runner = CliRunner()
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    items = load_dataset("sample").items
    assert set(_variants(run)) == {(i.id, c) for i in items for c in ("zh", "ls")}
    assert (run / "audit.jsonl").exists() and f"translated {len(items)} item(s)" in done.output
    requests = server.chat_requests()
    assert {r.body["model"] for r in requests} == {"gpt-4.1-mini"}
    assert requests[0].headers["authorization"] == "Bearer sk-test"
    assert re.search(r"\$0\.0*[1-9]", done.output)  # priced at gpt-4.1-mini rates
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and len(server.chat_requests()) == len(requests)


# --- done when: a 419-item LLMBar variants file with 3 planted problems -------------------------


@pytest.fixture
def llmbar() -> Path:
    if not (LLMBAR / "Dataset" / "LLMBar").is_dir():
        pytest.skip("../shared/llmbar is not present")
    return LLMBAR.resolve()


def test_llmbar_import_flags_exactly_the_planted_items(tmp_path: Path, llmbar: Path) -> None:
    items = load_dataset("llmbar", data_dir=llmbar).items
    assert len(items) == 419
    planted = {
        items[3].id: ("zh", "output_1", ""),
        items[150].id: ("ls", "instruction", items[150].instruction),
    }
    numbered = next(i for i in items[200:] if len(re.findall(r"\d+(?:\.\d+)?", i.output_2)) >= 3)
    planted[numbered.id] = ("zh", "output_2", re.sub(r"\d", "", numbered.output_2) + " 没有数字")
    rows = []
    for item in items:
        for cond in ("zh", "ls"):
            fields = {f: fake_translate(getattr(item, f), cond) for f in FIELDS}
            if item.id in planted and planted[item.id][0] == cond:
                fields[planted[item.id][1]] = planted[item.id][2]
            rows.append(json.dumps({"item_id": item.id, "condition": cond, **fields}, ensure_ascii=False))
    variants = tmp_path / "llmbar_variants.jsonl"
    variants.write_text("\n".join(rows) + "\n", encoding="utf-8")

    run = tmp_path / "run"
    result = api.translate(
        run, api.TranslateRequest(dataset="llmbar", data_dir=str(llmbar), variants_file=variants)
    )
    assert result.imported == 838
    flags = _flags(run)
    assert {f.item_id for f in flags} == set(planted), [
        f.model_dump() for f in flags if f.item_id not in planted
    ]
    assert result.audit_summary["flagged_items"] == 3 and result.audit_summary["items"] == 419
