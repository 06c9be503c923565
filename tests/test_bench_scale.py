"""scripts/bench_scale.py's own arithmetic and cache handling (its figures come from whole processes
on synthetic runs of 13k to 1M judgments; nothing here times anything)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from judgebench.store.judgment_table import cache_path, read_judgment_table, read_plan_table
from tests.analysis.test_columnar import _write_run

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_scale.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_cold_round_removes_exactly_the_caches_the_library_wrote(tmp_path: Path) -> None:
    judgments, plan = _write_run(tmp_path, items_per_subset=2)
    read_judgment_table(judgments)
    read_plan_table(plan)
    caches = [cache_path(judgments), cache_path(plan)]
    assert all(c.exists() for c in caches)
    before = {p.name for p in tmp_path.iterdir()}
    _script()._cold(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == before - {c.name for c in caches}


def test_rounds_give_medians_peak_rss_and_each_rounds_own_ratio() -> None:
    """Planted rounds: the machine halves its speed in round 2 (both commands take twice as long)."""
    bare = [{"wall_s": 1.0, "cpu_s": 1.0, "rss_mb": 10.0}, {"wall_s": 2.0, "cpu_s": 2.0, "rss_mb": 10.0}]
    bare.append({"wall_s": 1.2, "cpu_s": 1.2, "rss_mb": 10.0})
    report = [{"wall_s": 3.0, "cpu_s": 5.0, "rss_mb": 900.0}, {"wall_s": 6.0, "cpu_s": 9.0, "rss_mb": 950.0}]
    report.append({"wall_s": 3.6, "cpu_s": 6.0, "rss_mb": 910.0})
    got = _script()._summary(report, bare)
    assert got["wall_s"] == 3.6 and got["cpu_s"] == 6.0 and got["rss_mb"] == 950.0
    assert got["round_ratios"] == [3.0, 3.0, 3.0]  # each round's ratio is unmoved by the drift
    assert got["ratio"] == 3.6 / 1.2
    json.dumps(got)  # --json prints it
