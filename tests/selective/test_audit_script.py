"""scripts/audit_selective.py on a small budget: its rows, its seeds (same arguments, same figures) and
its verdict, which the point-estimate contrast shows can fail."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "audit_selective.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("audit_selective", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_selective"] = module
    spec.loader.exec_module(module)
    return module


SMALL = ["--calibrations", "200", "--labelled", "400", "--fresh", "3000"]


def test_the_audit_reports_each_scenario_and_passes_the_claimed_ones(tmp_path: Path) -> None:
    script = _script()
    out = tmp_path / "rows.json"
    assert script.main([*SMALL, "--json", str(out)]) == 0
    rows = {r["scenario"]: r for r in json.loads(out.read_text(encoding="utf-8"))}
    assert set(rows) == {"informative", "noise", "cascade", "cascade-paper", "point"}
    assert rows["informative"]["coverage_mean"] > 0.5 and rows["noise"]["coverage_mean"] < 0.02
    assert rows["point"]["failure_rate"] > 0.3  # the point estimate: the check would fail it
    again = tmp_path / "again.json"
    script.main([*SMALL, "--json", str(again)])
    strip = [
        {k: v for k, v in r.items() if k != "seconds"} for r in json.loads(again.read_text(encoding="utf-8"))
    ]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in rows.values()]


def test_a_scenario_that_fails_its_claim_makes_the_audit_exit_1() -> None:
    script = _script()
    lying = script.Scenario("point-claims-delta", script.SCENARIOS[-1].judges, 0.0, 1.0)
    script.SCENARIOS = (lying,)
    assert script.main(SMALL) == 1
