"""scripts/bench_output_tokens.py: its figures are real calls, and --write keeps the table readable."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from judgebench.costing.output_tokens import MEASURED_MARKER, load_table, measured_path
from tests.models.test_local import needs_model

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_output_tokens.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_output_tokens", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_write_keeps_the_assumptions_and_replaces_the_measurements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _script()
    table = tmp_path / "output_tokens.toml"
    shutil.copy(measured_path(), table)
    monkeypatch.setattr(bench, "measured_path", lambda: table)
    row = {"judge": "local", "template": "judge-default-v1", "mean": 2.0, "judgments": 4, "max": 2}
    args = bench.parse_args(["--items", "2"])
    for _ in range(2):  # twice: the second run replaces the first's entries, it does not add to them
        bench.write_measured([dict(row, ran_to_max_tokens=0.0)], args)
    parsed = load_table(table)
    assert parsed.assumed == load_table().assumed
    assert [(m.judge, m.output_tokens, m.judgments) for m in parsed.measured] == [("local", 2.0, 4)]
    assert table.read_text(encoding="utf-8").count(MEASURED_MARKER) == 1


@needs_model
@pytest.mark.local_model
def test_one_item_measured_through_llama_cpp_and_the_embedded_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _script()
    assert bench.main(["--items", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["judge"], r["template"]) for r in rows} == {
        (judge, name)
        for judge in ("openai-compatible:gemma3-270m", "local")
        for name in ("judge-default-v1", "judge-verdict-only-v1", "judge-verdict-schema-v1")
    }
    for r in rows:
        assert r["judgments"] == 2 and 0 < r["mean"] <= r["max"] <= r["max_tokens"]
    schema = next(r for r in rows if r["template"] == "judge-verdict-schema-v1" and r["form"] == "chat")
    assert schema["read_as_verdict"] == 1.0 and schema["ran_to_max_tokens"] == 0.0
    assert all(r["mean"] == 2 for r in rows if r["judge"] == "local")  # the completion form's letter
