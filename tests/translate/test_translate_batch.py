"""`translate --batch`: the whole stage through the emulated OpenAI Batch API (official SDK), in rounds,
writing the same variants as a live run and submitting nothing again on a rerun."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgebench import api
from judgebench.api import Execution
from judgebench.records import Variant
from judgebench.store.run_folder import read_jsonl
from tests.servers.openai_batch_server import OpenAIBatchServer
from tests.servers.openai_server import chat_body


class TranslatorBatchServer(OpenAIBatchServer):
    """Answers translation prompts: the item's fields prefixed per target; the first answer for item 2
    is invalid JSON so that the stage needs a second round (a re-ask) in batch mode too."""

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        user = body["messages"][1]["content"]
        source = json.loads(user.split("Source item (JSON):\n", 1)[1].split("\n\nReply with", 1)[0])
        targets = json.loads(user.rsplit("Reply with a JSON object of this shape:\n", 1)[1])
        if "Task 2" in source["instruction"] and len(body["messages"]) == 2:
            text = '{"zh": {"instruction": "unterminated'
        else:
            text = json.dumps(
                {t: {k: f"[{t}] 译文 {v}" for k, v in source.items()} for t in targets}, ensure_ascii=False
            )
        return chat_body(text, model=str(body.get("model")), prompt_tokens=50, completion_tokens=40)


def _items(path: Path) -> Path:
    rows = [
        {
            "id": f"Natural/{i}",
            "subset": "Natural",
            "instruction": f"Task {i}: list 3 fruits",
            "output_1": f"apple, pear, fig {i}",
            "output_2": f"carrot {i}",
            "label": 1,
        }
        for i in range(5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_translate_by_batch_in_rounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-translate-batch")
    data = _items(tmp_path / "items.jsonl")
    run = tmp_path / "run"
    with TranslatorBatchServer() as server:
        options = api.CallOptions(
            settings=api.SettingsOverrides(base_url=server.base_url, timeout=10, max_retries=2)
        )
        result = api.translate(
            run,
            api.TranslateRequest(dataset=str(data), translator="openai:gpt-4.1-mini"),
            options=options,
            execution=Execution(batch=True, poll_interval=0),
        )
        assert server.live_calls() == 0
        assert len(server.created()) == 2  # round 1: five items; round 2: the re-ask for item 2
        assert result.outcome is not None and result.outcome.translated == 5 and not result.outcome.failed
        assert result.outcome.provider_calls == 6 and result.outcome.cost_usd > 0
        variants = {(v.item_id, v.condition): v for v in read_jsonl(run / "variants.jsonl", Variant)}
        assert len(variants) == 10
        assert variants[("Natural/2", "ls")].output_1 == "[ls] 译文 apple, pear, fig 2"
        assert not (run / "translation_failures.jsonl").read_text().strip()
        again = api.translate(
            run,
            api.TranslateRequest(translator="openai:gpt-4.1-mini"),
            options=options,
            execution=Execution(batch=True, poll_interval=0),
        )
        assert len(server.created()) == 2 and server.live_calls() == 0
        assert again.outcome is not None and again.outcome.already_done == 5
