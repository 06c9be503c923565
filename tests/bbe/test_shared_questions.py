"""Scores tables whose systems answer the same questions (issue 40): a question is one cluster in the
certificate, the sensitivity bound and the holdout split, so the default release carries over to new
questions. The population (6% of questions broken for every system) is scripts/audit_bbe.py's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from judgebench.bbe.scores import ScoreSet
from judgebench.bbe.sensitivity import estimate
from judgebench.bbe.tables import scoreset_from_table
from judgebench.bbe.verify import holdout_mask
from judgebench.cli import app
from tests.bbe.helpers import audit_script

TAU, DELTA = 0.5, 0.01


def _table_file(tmp_path: Path, rows: list[tuple[str, str, float, float]]) -> Path:
    lines = ["system,unit,context,score"]
    lines += [f"{s},{q},base,{b:g}" for s, q, b, _ in rows]
    lines += [f"{s},{q},formatting,{n:g}" for s, q, _, n in rows]
    path = tmp_path / "shared.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_shared_question_tables_default_release_carries_over() -> None:
    """Seeded, cheap: 40 contexts of 20 systems x 30 questions. Clustered by question (bbe/tables.py),
    every default release holds on new questions; the same contexts with rows as their own clusters
    (the code before issue 40) exceed delta in some, so the population does test the clustering."""
    audit = audit_script()
    rng = np.random.default_rng([40, 3])
    params = audit.BBEParams(tau=TAU, delta=DELTA, alpha=None)
    now, rows_alone = [], []
    for _ in range(40):
        ss = audit.shared_table(rng, 20, 30)
        now.append(audit.true_violation(ss, params))
        rows_alone.append(audit.true_violation(dataclasses.replace(ss, group_index=None), params))
    assert max(now) <= DELTA
    assert sum(v > DELTA for v in rows_alone) >= 2


def _shared_set(rows: list[tuple[str, str, float, float]]) -> ScoreSet:
    frame = pd.DataFrame(
        [(s, q, "base", b) for s, q, b, _ in rows] + [(s, q, "formatting", n) for s, q, _, n in rows],
        columns=["system", "unit", "context", "score"],
    )
    return scoreset_from_table(frame, (1.0, 5.0), name="t", path=Path("t.csv"))


def test_the_holdout_split_and_the_bound_count_questions() -> None:
    """The holdout puts every row of a question in the same half; the sensitivity's upper bound takes
    one term per question (wider than one per row when a question moves every system)."""
    audit = audit_script()
    ss = _shared_set(audit.shared_rows(np.random.default_rng(7), 8, 60))
    mask = holdout_mask(ss, np.random.default_rng(1))
    assert mask is not None and len(np.unique(ss.groups())) == 60  # one cluster per question
    for q in set(ss.units):
        rows = np.array([u == q for u in ss.units])
        assert len(set(mask[rows])) == 1, q  # a question never straddles the halves
    kinds = ss.pair_kind
    grouped = estimate(ss.base, ss.pair_unit, ss.pair_score, kinds, upper_bound=True, delta_estimate=0.001,
                       pair_group=ss.groups()[ss.pair_unit])  # fmt: skip
    per_row = estimate(ss.base, ss.pair_unit, ss.pair_score, kinds, upper_bound=True, delta_estimate=0.001)
    assert grouped.upper is not None and per_row.upper is not None and grouped.upper > per_row.upper


def test_an_understated_sensitivity_fails_verification_and_the_default_release_passes(tmp_path: Path) -> None:
    """A shared-question table (10 systems x 80 questions): `--sensitivity 0.001 --alpha 1` is released
    and its verification fails; the default command (`--alpha auto`) releases, its holdout runs on
    question halves, and it passes."""
    audit = audit_script()
    table = _table_file(tmp_path, audit.shared_rows(np.random.default_rng(11), 10, 80))
    runner = CliRunner()
    common = ["bbe", "--tau", "0.5", "--delta", "0.01", "--scores", str(table), "--scale", "1", "5",
              "--verify", "2000", "--no-plot"]  # fmt: skip
    lie = runner.invoke(
        app, [*common, "--sensitivity", "0.001", "--alpha", "1", "--out", str(tmp_path / "l.json")]
    )
    honest = runner.invoke(app, [*common, "--out", str(tmp_path / "h.json")])
    assert lie.exit_code == 0 and honest.exit_code == 0, lie.output + honest.output
    lie_v = pd.read_json(tmp_path / "l.json", typ="series")["calibrations"][0]["verify"]
    honest_v = pd.read_json(tmp_path / "h.json", typ="series")["calibrations"][0]["verify"]
    assert lie_v["passed"] is False and "FAIL" in lie.output
    assert honest_v["passed"] is True and honest_v["kind"] == "holdout"
    assert honest_v["holdout"]["rate"] is not None and "tests the rule" in honest_v["holdout"]["check"]
