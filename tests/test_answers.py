"""judgments.jsonl read light (`answers.JudgmentLog`, issue 26): an `Answer` per line that is exactly
what the `Judgment` model gives, the model deciding every line the fast path cannot vouch for; a
resumed judge, a priced dry run and an import never build a `Judgment` per line."""

from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

from judgebench import api
from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.frame import judgment_frame
from judgebench.analysis.sequential import item_values, settle
from judgebench.errors import InputError
from judgebench.execution.settling import _ItemRows, answers_frame
from judgebench.records import CallKey, Judgment, PlannedKey
from judgebench.store import answers_log as answers
from judgebench.store.answers_log import JudgmentLog, answer_of, read_answers
from judgebench.store.run_folder import JUDGMENTS, PLAN, IndexedAppender, RunDir, read_jsonl
from tests.test_reads_once import _finished_run

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "run_main_2026_12"
BASE: dict[str, Any] = {"judge": "j", "item_id": "Natural/0", "subset": "Natural", "kind": "pair",
                        "condition": "en", "order": "orig"}  # fmt: skip


@contextmanager
def validations(model: type[Any]) -> Iterator[Counter[str]]:
    """How many times `model.model_validate` ran inside the block."""
    seen: Counter[str] = Counter()
    original = BaseModel.__dict__["model_validate"].__func__

    def counting(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        seen[cls.__name__] += 1
        return original(cls, *args, **kwargs)

    model.model_validate = classmethod(counting)  # type: ignore[assignment,method-assign]
    try:
        yield seen
    finally:
        del model.model_validate


def _write(path: Path, rows: list[dict[str, Any] | str]) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def _exact(path: Path) -> list[answers.Answer]:
    """What the model makes of each line (the reader every stage used before)."""
    out = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if raw.strip():
            out.append(answer_of(Judgment.model_validate(json.loads(raw)), number))
    return out


def test_every_judgment_field_has_its_fast_path_types() -> None:
    assert set(answers._TYPES) == set(Judgment.model_fields)


def test_answers_are_what_the_model_gives_on_either_path(tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        BASE | {"raw": "A", "winner": "A", "verdict": "1", "label": 1, "confidence": 0.8, "template": "t",
                "usage": {"input_tokens": 10, "output_tokens": 3}, "cost_usd": 0.0, "reask": 0},
        BASE | {"order": "swap", "verdict": None, "error": "timeout"},  # a failed call
        BASE | {"item_id": "Natural/1", "confidence": 1, "cost_usd": 2, "usage": {"input_tokens": 4}},
        BASE | {"item_id": "Natural/2", "newer_field": [1, 2], "usage": None, "label": 2},
        # the model coerces these (an int-valued float, a bool as a number): the model decides them
        BASE | {"item_id": "Natural/3", "reask": 1.0, "from_cache": False},
        BASE | {"item_id": "Natural/4", "confidence": True},
        BASE | {"item_id": "Natural/5", "kind": "tie_probe", "order": "en_zh", "verdict": "tie",
                "perturbation": {"field": "output_1", "operation": "reorder"}},
        BASE | {"raw": "again", "verdict": "2", "winner": "B"},  # supersedes line 1
    ]  # fmt: skip
    path = tmp_path / JUDGMENTS
    _write(path, rows)
    got, count = read_answers(path)
    assert got == _exact(path) and count == len(rows)
    assert got[2].confidence == 1.0 and type(got[2].confidence) is float and got[2].output_tokens == 0
    assert got[3].output_tokens is None and got[3].input_tokens is None
    assert got[4].reask == 1 and got[5].confidence == 1.0
    index = RunDir(tmp_path).judgments()
    assert index.latest()[CallKey("j", "Natural/0", "pair", "en", "orig")].line == len(rows)
    assert [a.line for a in index.lines()] == list(range(1, len(rows) + 1))


@pytest.mark.parametrize(
    "bad",
    [
        BASE | {"latency_s": "slow"},  # a field no resuming stage reads is still checked
        BASE | {"kind": "triple"},
        BASE | {"label": 3},
        {k: v for k, v in BASE.items() if k != "subset"},
        BASE | {"usage": {"output_tokens": "many"}},
        BASE | {"perturbation": {"field": "output_1"}},
    ],
)
def test_a_bad_record_is_refused_naming_its_line(tmp_path: Path, bad: dict[str, Any]) -> None:
    path = tmp_path / JUDGMENTS
    _write(path, [BASE, bad, BASE | {"item_id": "x"}])
    with pytest.raises(InputError) as light:
        RunDir(tmp_path).judgments().latest()
    with pytest.raises(InputError) as exact:
        list(read_jsonl(path, Judgment))
    assert str(light.value) == str(exact.value) and "line 2" in str(light.value)


def test_torn_lines_are_skipped_and_salvaged_as_the_exact_reader_does(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / JUDGMENTS
    whole = json.dumps(BASE | {"item_id": "Natural/9", "verdict": "2"})
    _write(path, [BASE, '{"judge": "j", "item_' + whole, BASE | {"item_id": "Natural/1"}])
    with path.open("a") as fh:
        fh.write('{"judge": "j", "ite')  # a torn tail
    with caplog.at_level(logging.WARNING, logger="judgebench.store.run_folder"):
        index = RunDir(tmp_path).judgments()
        got = index.lines()
    assert [a.item_id for a in got] == [j.item_id for j in read_jsonl(path, Judgment)]
    assert [a.line for a in got] == [1, 2, 3] and got[1].verdict == "2"
    assert "skipped 1 torn line(s) (line 2)" in caplog.text
    # the whole record of the salvaged line is the one appended onto the fragment
    assert index.records([2])[2].item_id == "Natural/9"


def test_appended_records_take_the_next_lines(tmp_path: Path) -> None:
    path = tmp_path / JUDGMENTS
    _write(path, [BASE, BASE | {"item_id": "Natural/1"}])
    index = RunDir(tmp_path).judgments()
    assert len(index.latest()) == 2
    new = Judgment.model_validate(BASE | {"item_id": "Natural/2", "raw": "text", "verdict": "1"})
    with IndexedAppender(index) as out:
        out.append(new)
    answer = index.latest()[new.call_key()]
    assert answer.line == 3 and index.records([answer.line]) == {3: new} and index.reads == 1
    assert list(RunDir(tmp_path).judgments().latest().values()) == list(index.latest().values())


def test_answers_frame_is_the_judgment_frame(tmp_path: Path) -> None:
    path = tmp_path / JUDGMENTS
    shutil.copy(FIXTURE / JUDGMENTS, path)
    with path.open("a") as fh:  # values the frame maps: no usage, no label, a verdict to normalise
        fh.write(json.dumps(BASE | {"verdict": " TIE ", "usage": None, "confidence": None}) + "\n")
        fh.write(json.dumps(BASE | {"item_id": "Natural/0", "order": "swap", "verdict": None}) + "\n")
    records = list(read_jsonl(path, Judgment))
    light, _ = read_answers(path)
    pd.testing.assert_frame_equal(answers_frame(light), judgment_frame(records))


def test_a_round_frames_only_its_items_and_settles_as_over_the_whole_run(tmp_path: Path) -> None:
    """`judge --until-settled` frames the judged items' answers each round, not the whole run: each
    item's values are its own rows', so the judged items' values and each judge's settlement are the
    ones a frame of every judgment gives."""
    index = JudgmentLog(FIXTURE / JUDGMENTS)
    targets = ["zh", "ls"]
    full = item_values(answers_frame(index.latest().values()), targets)
    items = sorted({k.item_id for k in index.latest()})
    rows = _ItemRows(index, {})
    settings = ReportSettings()
    for k in range(len(items) + 1):
        part = item_values(answers_frame(rows.of(items[:k])), targets)
        assert len(part) == sum(1 for _, item in full.index if item in items[:k])
        if not part.empty:
            expected = full.loc[part.index].dropna(axis=1, how="all")
            got = part.dropna(axis=1, how="all")[expected.columns]
            pd.testing.assert_frame_equal(got, expected, check_dtype=False)  # int8 where no NaN came
        for judge in ("sim:default", "sim:biased"):
            assert settle(part, judge, targets, settings, items[:k]) == settle(
                full, judge, targets, settings, items[:k]
            )
    assert rows.any_en()


def test_a_resumed_judge_and_its_dry_run_build_no_judgment_per_line(tmp_path: Path) -> None:
    """On the old index every line of judgments.jsonl (and of plan.jsonl) was validated into a
    model; now the models decide only lines the fast path cannot vouch for (none here)."""
    run, planned = _finished_run(tmp_path, 150)
    with validations(Judgment) as seen:  # the count sees the exact reader's models
        list(read_jsonl(run / JUDGMENTS, Judgment))
    assert seen["Judgment"] == planned
    with validations(Judgment) as seen, validations(PlannedKey) as keys:
        result = api.judge(run, api.JudgeRequest(models=["sim:default"]))
        api.judge(run, api.JudgeRequest(models=["sim:default"], dry_run=True))
    assert result.outcomes["sim:default"].already_done == planned == 1200
    assert seen["Judgment"] == 0 and keys["PlannedKey"] == 0
    assert isinstance(RunDir(run).judgments(), JudgmentLog)
    held = RunDir(run).plan().latest()
    assert len(held) == planned and all(type(k) is CallKey for k in held)
    assert len((run / PLAN).read_text().splitlines()) == planned  # nothing planned twice


def test_until_settled_rounds_frame_only_the_items_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed `--until-settled` on an answered run settles on its first items without framing
    every judgment of the run each round (before, each round framed all of judgments.jsonl)."""
    from judgebench.execution import settling

    run, planned = _finished_run(tmp_path, 100)
    framed: list[int] = []

    def counting(df: pd.DataFrame, targets: list[str]) -> pd.DataFrame:
        framed.append(len(df))
        return item_values(df, targets)

    monkeypatch.setattr(settling, "item_values", counting)
    result = api.judge(run, api.JudgeRequest(models=["sim:default"], until_settled=True, round_items=10))
    assert result.outcomes["sim:default"].requested == 0 and len(framed) >= 4
    # two frames a round (before its calls, after them), of the items judged by then: 8 rows each
    assert all(rows <= 8 * 10 * (i // 2 + 1) for i, rows in enumerate(framed)), framed
    assert framed[0] == 0 and framed[1] == 80 < planned
