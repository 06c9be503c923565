"""The columnar path (judgments.jsonl through pyarrow into the analysis table) against the record path
(every line a `Judgment`, then `analyze`): every metric equal on a mid-size run with ties, invalid
answers, failed calls, superseded lines and calls never made; damaged files take the exact reader."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.length_artefact import Lengths, output_lengths
from judgebench.analysis.record_pipeline import analyze_table, never_made
from judgebench.errors import InputError
from judgebench.records import Judgment, PlannedKey
from judgebench.store import jsonl_columns
from judgebench.store.judgment_table import (
    CALL_KEY,
    cache_path,
    judgment_table,
    read_judgment_table,
    read_plan_table,
)
from judgebench.store.run_folder import JsonlAppender, last_per_key, read_jsonl

SUBSETS = ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst")
SETTINGS = ReportSettings(bootstrap_samples=200, seed=7)


def _lengths(items_per_subset: int = 40) -> Lengths:
    """Outputs of every item in every condition: gold shorter, longer or as long, in words or in
    Chinese characters (zh), some conditions with no text (so no length record)."""
    texts = []
    for subset in SUBSETS:
        for i in range(items_per_subset):
            one, two = "word " * (1 + i % 5), "word " * (1 + i % 3)
            texts += [
                (f"{subset}/{i}", "en", one, two),
                (f"{subset}/{i}", "zh", "好" * (i % 4), "是" * (i % 2)),
            ]
    return Lengths(output_lengths(texts))


def _line(
    judge: str,
    item: str,
    subset: str,
    kind: str,
    cond: str,
    order: str,
    verdict: str | None,
    label: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    winner = None if verdict is None else {"tie": "Tie", "invalid": "invalid"}.get(verdict, "A")
    rec: dict[str, Any] = {"judge": judge, "item_id": item, "subset": subset, "kind": kind}
    rec |= {"condition": cond, "order": order, "verdict": verdict, "winner": winner, "label": label}
    rec |= {"raw": None if verdict is None else f"answer {verdict}", "confidence": float(rng.random())}
    rec |= {"usage": {"input_tokens": int(rng.integers(100, 400)), "output_tokens": 12}, "cost_usd": 1e-5}
    rec["error"] = "HTTP 500" if verdict is None else None
    if verdict in ("Tie ", " 1"):  # verdicts as an older parser wrote them: normalised on reading
        rec["winner"] = "Tie" if verdict.strip() == "Tie" else "A"
    return rec


def _write_run(folder: Path, *, items_per_subset: int = 40, seed: int = 11) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    lines: list[dict[str, Any]] = []
    plan: list[dict[str, str]] = []
    for judge in ("openai:gpt-4.1-mini", "sim:biased", "local"):
        for subset in SUBSETS:
            for i in range(items_per_subset):
                item, label = f"{subset}/{i}", 1 + i % 2
                for cond in ("en", "zh", "ls"):
                    for order in ("orig", "swap"):
                        u = rng.random()
                        verdict = (
                            None
                            if u < 0.03
                            else "invalid"
                            if u < 0.06
                            else "tie"
                            if u < 0.14
                            else "Tie "
                            if u < 0.16
                            else " 1"
                            if u < 0.18
                            else str(label)
                            if u < 0.8
                            else str(3 - label)
                        )
                        plan.append(
                            {
                                "judge": judge,
                                "item_id": item,
                                "kind": "pair",
                                "condition": cond,
                                "order": order,
                            }
                        )
                        if u > 0.985:
                            continue  # planned, never made
                        lines.append(_line(judge, item, subset, "pair", cond, order, verdict, label, rng))
                for order in ("en_zh", "zh_en"):
                    verdict = str(rng.choice(["tie", "en", "zh", "invalid"]))
                    lines.append(_line(judge, item, subset, "tie_probe", "zh", order, verdict, label, rng))
    for rec in lines[::37]:  # a resumed run rewrote some calls: the last line per key wins
        lines.append(rec | {"verdict": "2", "winner": "B", "raw": "rewritten"})
    judgments, planned = folder / "judgments.jsonl", folder / "plan.jsonl"
    with open(judgments, "w", encoding="utf-8") as fh:
        for rec in lines:
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    with JsonlAppender(planned) as out:
        for key in plan:
            out.append(PlannedKey(**key))
    return judgments, planned


def _record_path(judgments: Path, planned: Path) -> list[dict[str, Any]]:
    records = last_per_key(read_jsonl(judgments, Judgment), lambda j: j.call_key())
    keys = {p.key() for p in read_jsonl(planned, PlannedKey)}
    analysis = analyze(
        list(records.values()),
        settings=SETTINGS,
        planned=keys,
        flagged_items={"Natural/3"},
        condition_order=["zh", "ls"],
        lengths=_lengths(),
    )
    return [r.model_dump() for r in analysis.records] + [j.model_dump() for j in analysis.judges]


def _columnar_path(judgments: Path, planned: Path) -> list[dict[str, Any]]:
    table = read_judgment_table(judgments)
    analysis = analyze_table(
        table.analysis_frame(),
        settings=SETTINGS,
        planned=read_plan_table(planned),
        flagged_items={"Natural/3"},
        condition_order=["zh", "ls"],
        lengths=_lengths(),
    )
    return [r.model_dump() for r in analysis.records] + [j.model_dump() for j in analysis.judges]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) is type(b)


def test_every_metric_is_the_same_on_both_paths(tmp_path: Path) -> None:
    judgments, planned = _write_run(tmp_path)
    records, columns = _record_path(judgments, planned), _columnar_path(judgments, planned)
    assert len(records) > 1000
    metrics = {r.get("metric") for r in records}
    assert {
        "length_baseline_shorter_tokens",
        "accuracy_gold_longer",
        "accuracy_over_length_baseline",
    } <= metrics
    mismatched = [(a, b) for a, b in zip(records, columns, strict=True) if not _same(a, b)]
    assert len(records) == len(columns) and not mismatched, mismatched[:3]


def test_a_torn_line_takes_the_exact_reader_and_gives_its_table(tmp_path: Path) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=6)
    whole = read_judgment_table(judgments).frame
    data = judgments.read_bytes().split(b"\n")
    data.insert(10, data[10][:40])  # a killed writer's fragment, then whole lines after it
    judgments.write_bytes(b"\n".join(data))
    torn = read_judgment_table(judgments)
    assert torn.held is not None  # the exact path read it
    cols = ["judge", "item_id", "kind", "condition", "order", "verdict", "label"]
    assert torn.frame[cols].equals(whole[cols])


def test_a_bad_record_is_named_by_file_and_line(tmp_path: Path) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=3)
    lines = judgments.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[4]) | {"kind": "triple"}
    lines[4] = json.dumps(bad)
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_judgment_table(judgments)
    assert "judgments.jsonl" in str(err.value) and "line 5" in str(err.value)


@pytest.mark.parametrize(
    "change",
    [
        {"label": "1"},  # pydantic would refuse or coerce it: never the fast path's guess
        {"confidence": "0.5"},
        {"usage": {"input_tokens": 3.0}},
        {"perturbation": {"field": "output_1"}},
    ],
)
def test_values_the_fast_path_cannot_vouch_for_get_the_exact_reader(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=2)
    lines = judgments.read_text(encoding="utf-8").splitlines()
    lines[2] = json.dumps(json.loads(lines[2]) | change)
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        exact = list(last_per_key(read_jsonl(judgments, Judgment), lambda j: j.call_key()).values())
    except InputError:
        with pytest.raises(InputError):
            read_judgment_table(judgments)
        return
    table = read_judgment_table(judgments)
    assert table.held is not None
    assert table.frame.equals(judgment_table(exact).frame)


def test_whole_records_come_back_for_the_rows_shown(tmp_path: Path) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=4)
    table = read_judgment_table(judgments)
    assert table.held is None  # the fast path: records are read again only where shown
    rows = table.frame.iloc[[0, 7, 30]]
    records = table.records(rows["line"].tolist())
    for _, row in rows.iterrows():
        record = records[int(row["line"])]
        assert (record.judge, record.item_id, record.condition, record.order) == (
            row["judge"],
            row["item_id"],
            row["condition"],
            row["order"],
        )


def test_the_cached_table_is_used_only_while_the_log_is_unchanged(tmp_path: Path) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=5)
    first = read_judgment_table(judgments).frame
    cache = cache_path(judgments)
    assert cache.exists()
    assert read_judgment_table(judgments).frame.equals(first)  # read back from the cache

    # appended after the cache was written: stale, rebuilt with the new line
    line = json.loads(judgments.read_text(encoding="utf-8").splitlines()[0])
    with open(judgments, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line | {"verdict": "invalid", "winner": "invalid"}, separators=(",", ":")) + "\n")
    appended = read_judgment_table(judgments).frame
    key = (appended["judge"] == line["judge"]) & (appended["item_id"] == line["item_id"])
    key &= (appended["condition"] == line["condition"]) & (appended["order"] == line["order"])
    assert appended.loc[key & (appended["kind"] == line["kind"]), "verdict"].tolist() == ["invalid"]

    # edited in place, same size, and the modification time set back: the edit is seen all the same
    stat = judgments.stat()
    text = judgments.read_bytes()
    at = text.rindex(b'"verdict":"invalid"')  # the appended line's verdict
    edited = text[:at] + b'"verdict":"tie"    ' + text[at + len(b'"verdict":"invalid"') :]
    assert len(edited) == len(text) and edited != text
    judgments.write_bytes(edited)
    os.utime(judgments, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = read_judgment_table(judgments).frame
    assert after.loc[key & (after["kind"] == line["kind"]), "verdict"].tolist() == ["tie"]


def test_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=3)
    first = read_judgment_table(judgments).frame
    cache_path(judgments).write_bytes(b"PAR1 not a parquet file")
    assert read_judgment_table(judgments).frame.equals(first)
    assert cache_path(judgments).read_bytes()[:4] == b"PAR1" and cache_path(judgments).stat().st_size > 100


def test_the_plan_is_cached_and_a_stale_plan_cache_is_rebuilt(tmp_path: Path) -> None:
    _, planned = _write_run(tmp_path, items_per_subset=4)
    first = read_plan_table(planned)
    assert first is not None and cache_path(planned).exists()
    again = read_plan_table(planned)
    assert again is not None and again.equals(first)  # from the cache
    with JsonlAppender(planned) as out:  # one more planned call: the cache is stale
        out.append(PlannedKey(judge="new", item_id="Natural/0", kind="pair", condition="en", order="orig"))
    grown = read_plan_table(planned)
    assert grown is not None and len(grown) == len(first) + 1
    assert grown[grown["judge"] == "new"]["item_id"].tolist() == ["Natural/0"]


@pytest.mark.parametrize("piece", [64, 700, 5000, 1 << 20])
def test_pieces_of_any_size_give_the_same_table_and_offsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    """The file is parsed in pieces of whole lines: a piece shorter than one line (64 bytes), pieces
    that cut between lines anywhere, and one piece give the exact reader's table, and each row's
    offset is where its line starts (a record read back there has the row's call key)."""
    judgments, _ = _write_run(tmp_path, items_per_subset=3)
    text = judgments.read_bytes()
    judgments.write_bytes(text.rstrip(b"\n"))  # and an unterminated last line
    monkeypatch.setattr(jsonl_columns, "_PIECE", piece)
    table = read_judgment_table(judgments)
    assert table.held is None  # the fast path read it
    exact = list(last_per_key(read_jsonl(judgments, Judgment), lambda j: j.call_key()).values())
    cols = ["judge", "item_id", "kind", "condition", "order", "verdict", "label", "line"]
    assert table.frame[cols].equals(judgment_table(exact).frame[cols].assign(line=table.frame["line"]))
    starts = [0, *(i + 1 for i, byte in enumerate(text.rstrip(b"\n")) if byte == 10)]
    assert table.frame["offset"].tolist() == [starts[n] for n in table.frame["line"]]
    shown = table.records(table.frame["line"].iloc[[0, -1, 5]].tolist())
    assert [shown[n].item_id for n in table.frame["line"].iloc[[0, -1, 5]]] == list(
        table.frame["item_id"].iloc[[0, -1, 5]]
    )


@pytest.mark.parametrize("damage", [b"\n\n", b"\r\n", b"\n   \n"])
def test_a_blank_or_cr_line_at_a_piece_boundary_takes_the_exact_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=3)
    lines = judgments.read_bytes().split(b"\n")
    judgments.write_bytes(b"\n".join(lines[:7]) + damage + b"\n".join(lines[7:]))
    monkeypatch.setattr(jsonl_columns, "_PIECE", len(b"\n".join(lines[:7])) + 1)
    table = read_judgment_table(judgments)
    assert table.held is not None  # the exact reader decided what the odd lines hold
    exact = list(last_per_key(read_jsonl(judgments, Judgment), lambda j: j.call_key()).values())
    assert table.frame.equals(judgment_table(exact).frame)


def test_a_record_read_back_after_the_file_was_rewritten_is_still_the_rows(tmp_path: Path) -> None:
    """Offsets are checked against the row's call key: a log rewritten since the table was read (a torn
    line repaired, lines removed) is scanned by line number instead of trusting a stale offset."""
    judgments, _ = _write_run(tmp_path, items_per_subset=3)
    table = read_judgment_table(judgments)
    lines = judgments.read_bytes().split(b"\n")
    judgments.write_bytes(b"\n".join([lines[1], *lines[1:]]))  # line 0 replaced: every offset shifts
    row = table.frame.iloc[3]
    record = table.records([int(row["line"])])[int(row["line"])]
    expected = Judgment.model_validate_json(lines[int(row["line"])] if int(row["line"]) else lines[1])
    assert record.call_key() == expected.call_key()


def test_the_last_line_of_a_key_wins_and_rows_are_in_call_key_order(tmp_path: Path) -> None:
    judgments, _ = _write_run(tmp_path, items_per_subset=4)
    lines = judgments.read_text(encoding="utf-8").splitlines()
    with open(judgments, "a", encoding="utf-8") as fh:  # superseding lines: the last one must win
        for line in lines[:5]:
            fh.write(json.dumps(json.loads(line) | {"verdict": "invalid", "winner": "invalid"}) + "\n")
    frame = read_judgment_table(judgments).frame
    last: dict[tuple[str, ...], int] = {}
    for at, line in enumerate(judgments.read_text(encoding="utf-8").splitlines()):
        rec = json.loads(line)
        last[tuple(rec[k] for k in CALL_KEY)] = at
    assert frame["line"].tolist() == [last[key] for key in sorted(last)]
    assert (frame["verdict"] == "invalid").sum() >= 5


def test_records_read_at_their_offsets_are_the_exact_readers(tmp_path: Path) -> None:
    """Every line read back at its offset is the record the exact reader gives for that line, an
    integer confidence and a surrogate-pair escape included."""
    judgments, _ = _write_run(tmp_path, items_per_subset=3)
    lines = judgments.read_text(encoding="utf-8").splitlines()
    lines[3] = json.dumps(json.loads(lines[3]) | {"confidence": 1, "raw": "smile \U0001f600 é"})
    lines[4] = json.dumps(json.loads(lines[4]) | {"raw": "smile \U0001f600"}, ensure_ascii=True)
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = read_judgment_table(judgments)
    assert table.held is None
    every = table.frame["line"].tolist()
    exact = dict(enumerate(read_jsonl(judgments, Judgment)))
    assert table.records(every) == {line: exact[line] for line in every} and len(every) > 100
    assert table.records([4])[4].raw == "smile \U0001f600"


def test_records_are_read_at_their_offsets_not_by_a_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table the fast path made reads the records asked for at their byte offsets: `records`
    validates just those lines (a scan up to the last would validate every line before it)."""
    judgments, _ = _write_run(tmp_path, items_per_subset=4)
    table = read_judgment_table(judgments)
    validated: list[int] = []
    real = Judgment.model_validate_json.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Judgment], data: Any, **kw: Any) -> Judgment:
        validated.append(1)
        return real(cls, data, **kw)  # type: ignore[no-any-return]

    monkeypatch.setattr(Judgment, "model_validate_json", classmethod(counting))
    late = table.frame["line"].nlargest(3).tolist()  # near the end of the file
    records = table.records(late)
    assert sorted(records) == sorted(late) and len(validated) == 3


def test_never_made_counts_the_planned_keys_without_a_record(tmp_path: Path) -> None:
    """The never-made count (one integer per call key, compared with np.isin) is the plain set
    difference of planned and present keys, per judge."""
    judgments, planned = _write_run(tmp_path)
    frame = read_judgment_table(judgments).analysis_frame()
    plan = read_plan_table(planned)
    assert plan is not None
    counted = never_made(frame, plan)
    keys = list(CALL_KEY)
    present = set(frame[keys].astype(str).itertuples(index=False, name=None))
    missing = [k for k in plan[keys].astype(str).itertuples(index=False, name=None) if k not in present]
    expected = Counter(key[0] for key in missing)
    assert counted is not None and counted.sum() > 0
    assert counted.to_dict() == dict(expected)
