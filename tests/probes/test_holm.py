"""Issue 40: probe flags are controlled per judge (Holm over its probe rows), and the table's p are
shown raw and adjusted. Planted through the analysis: six probes each a little above the limit."""

from __future__ import annotations

import pytest

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.findings import ProbeRow
from judgebench.records import Judgment
from judgebench.records.condition_specs import ProbeOrigin
from tests.analysis.builders import pair

ITEMS = 400
PROBES = [f"probe{k}" for k in range(6)]


def _judge(name: str, flips: dict[str, int]) -> list[Judgment]:
    """en always right; in probe p the first flips[p] items flip in the swapped order only."""
    out = []
    for i in range(ITEMS):
        item = f"Natural/{i}"
        out += [pair(name, item, "en", o, "1", 1) for o in ("orig", "swap")]
        for probe in PROBES:
            out.append(pair(name, item, probe, "orig", "1", 1))
            out.append(pair(name, item, probe, "swap", "2" if i < flips.get(probe, 0) else "1", 1))
    return out


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], ProbeRow]:
    # 152 of 800 pairs (19%) on 400 items: each row's raw limit test has p about 0.025 < 0.05, and
    # its interval lies above 15%; six of them: Holm's smallest adjusted p is about 6 x 0.025
    near = {p: 152 for p in PROBES}
    strong = {PROBES[0]: 200}  # 25%, z about 5.6: survives any adjustment
    js = _judge("near", near) + _judge("strong", strong)
    probes = {p: ProbeOrigin(p, "en") for p in PROBES}
    analysis = analyze(js, settings=ReportSettings(bootstrap_samples=300), probes=probes)
    return {(r.judge, r.condition): r for r in analysis.probe_rows}


def test_six_rows_each_raw_significant_are_not_flagged_after_holm(
    rows: dict[tuple[str, str], ProbeRow],
) -> None:
    near = [rows[("near", p)] for p in PROBES]
    for row in near:
        assert row.ci_low is not None and row.ci_low > row.limit  # per row it would have been a flag
        assert row.p_limit is not None and 0.01 < row.p_limit < 0.05
        assert row.p_holm is not None and row.p_holm >= 0.05
        assert row.status == "inconclusive"


def test_a_strong_row_is_still_flagged_and_clean_rows_are_within(
    rows: dict[tuple[str, str], ProbeRow],
) -> None:
    strong = rows[("strong", PROBES[0])]
    assert strong.status == "flagged" and strong.p_holm is not None and strong.p_holm < 1e-6
    assert strong.p_limit is not None and strong.p_holm >= strong.p_limit
    assert all(rows[("strong", p)].status == "within" for p in PROBES[1:])
