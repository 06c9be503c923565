"""Loading scores: Judge-LS runs, generic tables (with factors and jitter) and arena-hard-auto folders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from judgebench.bbe.scores import load_run
from judgebench.bbe.tables import (
    arena_label,
    factor_columns,
    load_arena_hard,
    read_table,
    scoreset_from_table,
)
from judgebench.errors import InputError
from tests.bbe.helpers import write_run


def test_run_units_neighbours_and_invalid_counts(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r", judges={"j1": 0.2, "j2": 0.0}, items=30, invalid_rate=0.1, missing_rate=0.05
    )
    sets = {s.name: s for s in load_run(run).sets}
    assert set(sets) == {"j1", "j2"}
    s = sets["j1"]
    assert len(s) == 60  # items x orders in en
    assert s.aggregate == "accuracy" and s.gold is not None
    kinds = set(s.pair_kind)
    assert kinds <= {"zh", "ls", "swap"} and "swap" in kinds
    # every unit has 3 neighbours: valid ones are pairs, the rest are counted, none vanish
    assert len(s.pair_unit) + sum(s.invalid_neighbours.values()) == 60 * 3
    assert sum(s.invalid_neighbours.values()) > 0
    assert set(s.invalid_neighbours) <= {"zh", "ls"}
    # j2 never flips across conditions: its zh/ls changes are all zero
    s2 = sets["j2"]
    mask = np.array([k in ("zh", "ls") for k in s2.pair_kind])
    assert np.all(s2.pair_score[mask] == s2.base[s2.pair_unit[mask]])


def test_run_swap_neighbour_is_p_output1(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    rows = []
    for order, verdict in (("orig", "1"), ("swap", "2")):
        rows.append(
            {
                "judge": "j",
                "item_id": "x/0",
                "subset": "x",
                "kind": "pair",
                "condition": "en",
                "order": order,
                "verdict": verdict,
                "label": 1,
            }
        )
    (run / "judgments.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (s,), _ = load_run(run)
    assert s.units == ["x/0|orig", "x/0|swap"]
    np.testing.assert_array_equal(s.base, [1.0, 0.0])
    # each unit's swap neighbour is the other order's P(output_1): here the judge flips with the order
    np.testing.assert_array_equal(s.pair_score, [0.0, 1.0])


def test_run_probabilities_renormalised(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", judges={"j": 0.0}, items=4, probs=True)
    (s,), _ = load_run(run, mode="auto")
    assert s.score_source == "probabilities"
    # verdict "1" in orig: prob_a = 0.8, prob_b = 0.15, tie 0.05 -> (0.8 + 0.025) / 1.0
    values = set(np.round(s.base, 6))
    assert values <= {round(0.825, 6), round(0.175, 6)}
    (v,), _ = load_run(run, mode="verdict")
    assert set(v.base) <= {0.0, 1.0}


def test_run_last_line_per_key_wins(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", judges={"j": 0.0}, items=2)
    extra = {
        "judge": "j",
        "item_id": "Natural/0",
        "subset": "Natural",
        "kind": "pair",
        "condition": "en",
        "order": "orig",
        "verdict": "tie",
        "label": 1,
    }
    with open(run / "judgments.jsonl", "a") as fh:
        fh.write(json.dumps(extra) + "\n")
    (s,), _ = load_run(run)
    assert s.base[s.units.index("Natural/0|orig")] == 0.5


def test_table_with_factors_and_repeats(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        "system,unit,context,score,style,correctness\n"
        "a,u1,base,4,3,5\n"
        "a,u1,base,5,3,5\n"
        "a,u1,fmt,2,1,5\n"
        "a,u1,fmt,,,\n"
        "b,u1,base,1,1,1\n"
        "b,u2,fmt,3,3,3\n"
    )
    frame = read_table(path)
    assert factor_columns(frame) == ["style", "correctness"]
    s = scoreset_from_table(frame, (1, 5), name="t", path=path)
    assert s.units == ["u1", "u1"] and s.systems == ["a", "b"]
    np.testing.assert_allclose(s.base, [0.75, 0.0])
    np.testing.assert_allclose(s.pair_score, [0.25])
    assert s.invalid_neighbours == {"fmt": 1}
    assert s.units_dropped == {"neighbour_without_base": 1}
    assert len(s.repeat_unit) == 3  # first base row + its repeat, and b's base row
    style = scoreset_from_table(frame, (1, 5), name="t:style", column="style", path=path)
    np.testing.assert_allclose(style.pair_score, [0.0])


def test_table_outside_scale_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("system,unit,context,score\na,u1,base,7\n")
    with pytest.raises(InputError, match="outside the declared scale"):
        scoreset_from_table(read_table(path), (1, 5), name="t", path=path)
    bad = tmp_path / "b.csv"
    bad.write_text("system,unit,score\na,u1,3\n")
    with pytest.raises(InputError, match="missing column"):
        read_table(bad)


def test_arena_labels_and_likert(tmp_path: Path) -> None:
    assert arena_label({"score": "A>>B"}) == "A>>B"
    assert arena_label({"score": None, "judgment": "... final verdict: [[B>A]]"}) == "B>A"
    assert arena_label({"score": None, "judgment": "[[A>B]] then [[B>A]]"}) is None
    assert arena_label({"score": "B<A"}) == "A>B"
    folder = tmp_path / "judge"
    folder.mkdir()
    rec = {
        "question_id": "q1",
        "model": "m",
        "judge": "gpt-x",
        "games": [
            {"score": "B>>A", "judgment": ""},  # game 1: model is B, much better -> 5
            {"score": "A>B", "judgment": ""},  # game 2: model is A, better -> 4
        ],
    }
    rec2 = {
        "question_id": "q2",
        "model": "m",
        "judge": "gpt-x",
        "games": [{"score": None, "judgment": "??"}, {"score": "A=B"}],
    }
    base = {
        "question_id": "q1",
        "model": "baseline",
        "judge": "gpt-x",
        "games": [{"score": "A=B"}, {"score": "A=B"}],
    }
    (folder / "m.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(rec2) + "\n")
    (folder / "baseline.jsonl").write_text(json.dumps(base) + "\n")
    s = load_arena_hard(folder, baseline="baseline")
    assert s.scale == (1.0, 5.0) and s.name == "gpt-x"
    # one unit per (model, question), PROTOCOL §5: game 1 scores it, game 2 is its swap neighbour
    raw = dict(zip(s.units, s.denormalise(s.base), strict=True))
    assert raw == {"q1": 5.0, "q2": 3.0}  # q2: game 1 unreadable, so game 2 scores it
    assert s.systems == ["m", "m"]
    assert s.units_dropped == {}  # q2 is scored from game 2, not dropped
    assert s.invalid_neighbours == {"swap": 1}  # q2's neighbour (game 1) is unreadable
    np.testing.assert_allclose(s.denormalise(s.pair_score), [4.0])
    assert s.pair_unit.tolist() == [0]


def test_arena_records_without_a_second_game_say_so(tmp_path: Path) -> None:
    folder = tmp_path / "judge"
    folder.mkdir()
    rec = {"question_id": "q1", "model": "m", "games": [{"score": "A>B"}]}
    (folder / "m.jsonl").write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match="no record has a second game"):
        load_arena_hard(folder)


def _all_invalid(run: Path, judge: str) -> None:
    """Rewrite every judgment of `judge` in the run as an invalid answer."""
    path = run / "judgments.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["judge"] == judge:
            rec.update(verdict="invalid", winner="invalid")
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")


def test_a_judge_with_no_scorable_en_unit_is_skipped_not_fatal(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"good": 0.1, "dead": 0.1}, items=10)
    _all_invalid(run, "dead")
    loaded = load_run(run)
    assert [s.name for s in loaded.sets] == ["good"]
    assert "dead" in loaded.skipped and "20 invalid" in loaded.skipped["dead"]
    _all_invalid(run, "good")
    with pytest.raises(InputError, match="no judge can be calibrated"):
        load_run(run)


def test_both_orders_of_an_item_share_a_group(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", judges={"j": 0.2}, items=10)
    (s,), _ = load_run(run)
    item_of = [u.rsplit("|", 1)[0] for u in s.units]
    groups = s.groups()
    assert len(set(groups.tolist())) == 10
    for a in range(len(s)):
        for b in range(len(s)):
            assert (groups[a] == groups[b]) == (item_of[a] == item_of[b])
