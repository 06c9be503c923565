"""The item explorer's rows, payload and HTML: which rows flipped or were inconsistent, a compact payload
that round-trips, JSON that cannot break out of its <script>, and the export for human review."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from judgebench.analysis import Analysis
from judgebench.records import AuditFlag, Judgment
from judgebench.report.content import ReportMeta
from judgebench.report.explorer import (
    ExplorerData,
    ItemTexts,
    explorer_payload,
    explorer_rows,
    page_rows,
    payload_json,
    unstable_records,
)
from judgebench.report.html import CSP, render_html
from judgebench.report.report_sections import build_sections

META = ReportMeta(run="run", generated_at="now", version="0")


def _j(item: str, cond: str, order: str, verdict: str | None, *, judge: str = "J", **extra: Any) -> Judgment:
    return Judgment.model_validate(
        {
            "judge": judge,
            "item_id": item,
            "subset": "Natural",
            "kind": "pair",
            "condition": cond,
            "order": order,
            "verdict": verdict,
            "raw": None if verdict is None else f"raw {verdict}",
            "label": 1,
            **extra,
        }
    )


def _grid(item: str, verdicts: dict[tuple[str, str], str | None], judge: str = "J") -> list[Judgment]:
    return [_j(item, c, o, v, judge=judge) for (c, o), v in verdicts.items()]


STABLE = {("en", "orig"): "1", ("en", "swap"): "1", ("zh", "orig"): "1", ("zh", "swap"): "1"}
FLIPPED = {("en", "orig"): "1", ("en", "swap"): "1", ("zh", "orig"): "2", ("zh", "swap"): "1"}
INCONSISTENT_EN = {("en", "orig"): "1", ("en", "swap"): "tie", ("zh", "orig"): "1", ("zh", "swap"): "tie"}
WRONG_EN_ONLY = {("en", "orig"): "2", ("en", "swap"): "2", ("zh", "orig"): "1", ("zh", "swap"): "1"}
# an invalid or missing verdict is no evidence of a flip or an inconsistency (PROTOCOL §4)
INVALID = {("en", "orig"): "invalid", ("en", "swap"): None, ("zh", "orig"): "2", ("zh", "swap"): "1"}


def _data() -> ExplorerData:
    judgments = [
        *_grid("a", STABLE),
        *_grid("b", FLIPPED),
        *_grid("c", INCONSISTENT_EN),
        *_grid("d", WRONG_EN_ONLY),
        *_grid("e", INVALID),
        *_grid("a", FLIPPED, judge="K"),
    ]
    texts = {
        ("b", "en"): ItemTexts("Say hi", "hi", "bye"),
        ("b", "zh"): ItemTexts("说你好", "你好", "再见 </script><!-- x"),
    }
    audit = [AuditFlag(item_id="b", condition="zh", field="output_2", rule="empty", detail="short")]
    return ExplorerData(judgments, texts, audit, ["en", "zh"])


def test_rows_follow_the_protocol_rules() -> None:
    rows = {(r.item_id, r.judge): r for r in explorer_rows(_data())}
    assert len(rows) == 6
    assert (rows["a", "J"].flipped, rows["a", "J"].inconsistent) == ([], [])
    assert (rows["b", "J"].flipped, rows["b", "J"].inconsistent) == (["zh"], ["zh"])
    assert (rows["c", "J"].flipped, rows["c", "J"].inconsistent) == ([], ["en", "zh"])
    assert rows["d", "J"].wrong_en_only and not rows["b", "J"].wrong_en_only
    assert (rows["e", "J"].flipped, rows["e", "J"].inconsistent) == ([], ["zh"])
    assert rows["a", "K"].flipped == ["zh"]  # judges are rows of their own


def test_payload_is_columnar_and_round_trips() -> None:
    data = _data()
    payload = explorer_payload(data)
    s = payload["s"]
    assert len(s) == len(set(s))  # every string once
    rows, js = payload["rows"], payload["judgments"]
    assert len(rows["start"]) == len(rows["item"]) + 1 == 7
    assert rows["start"][-1] == len(js["cond"]) == len(data.judgments)
    cond_bit = {c: 1 << i for i, c in enumerate(payload["conditions"])}
    r = next(i for i, it in enumerate(rows["item"]) if payload["items"]["id"][it] == "b")
    assert rows["flip"][r] == cond_bit["zh"] and rows["incon"][r] == cond_bit["zh"]
    verdicts = {
        (s[js["cond"][x]], s[js["order"][x]]): s[js["verdict"][x]]
        for x in range(rows["start"][r], rows["start"][r + 1])
    }
    assert verdicts == FLIPPED
    item_b = payload["items"]["id"].index("b")
    texts = [
        [s[t] for t in payload["texts"]["text"][3 * k : 3 * k + 3]]
        for k, it in enumerate(payload["texts"]["item"])
        if it == item_b
    ]
    assert ["说你好", "你好", "再见 </script><!-- x"] in texts
    assert [s[t] for t in payload["audit"]["text"]] == ["zh output_2: empty (short)"]


def test_payload_json_cannot_close_its_script_element() -> None:
    text = payload_json(_data())
    assert "</" not in text and "<!--" not in text
    assert json.loads(text) == explorer_payload(_data())


def test_unstable_export_holds_texts_verdicts_and_flags() -> None:
    records = unstable_records(_data())
    keys = [(r["item_id"], r["judge"]) for r in records]
    assert keys == [("b", "J"), ("c", "J"), ("d", "J"), ("e", "J"), ("a", "K")]  # d flipped too
    b = records[0]
    assert b["flipped"] == ["zh"] and b["position_inconsistent"] == ["zh"]
    assert b["texts"]["zh"]["instruction"] == "说你好" and b["texts"]["en"]["output_1"] == "hi"
    assert {(v["condition"], v["order"]): v["verdict"] for v in b["verdicts"]} == FLIPPED
    assert b["verdicts"][0]["raw"].startswith("raw ")
    assert b["audit"][0]["rule"] == "empty"
    json.dumps(records, ensure_ascii=False)  # JSONL-ready


def test_html_carries_the_explorer_only_when_given(full_analysis: Analysis) -> None:
    sections = build_sections(full_analysis)
    plain = render_html(sections, {}, META)
    assert "<script" not in plain and f'content="{CSP}"' in plain
    page = render_html(sections, {}, META, payload_json(_data()))
    assert "script-src 'unsafe-inline'" in page and "default-src 'none'" in page
    assert 'href="#explorer"' in page and '<section id="explorer">' in page
    scripts = re.findall(r"<script\b([^>]*)>", page)
    assert scripts == [' type="application/json" id="jbx-data"', ""]  # inline only, no src
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    data = page.split('id="jbx-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["items"]["id"] == ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize("judgments", [[]])
def test_empty_run_has_an_empty_payload(judgments: list[Judgment]) -> None:
    payload = explorer_payload(ExplorerData(judgments))
    assert payload["rows"]["start"] == [0] and payload["items"]["id"] == []


def test_past_the_row_limit_the_page_keeps_the_rows_that_matter_and_counts_the_rest() -> None:
    data = _data()
    every = explorer_rows(data)
    assert len(every) == 6 and explorer_payload(data)["rows_left_out"] == 0  # under the limit: all
    limited = ExplorerData(data.judgments, data.texts, data.audit, data.conditions, row_limit=3)
    payload = explorer_payload(limited)
    shown = [
        (payload["items"]["id"][i], payload["judges"][j])
        for i, j in zip(payload["rows"]["item"], payload["rows"]["judge"], strict=True)
    ]
    unstable = [(r.item_id, r.judge) for r in every if r.unstable]
    assert len(unstable) == 5 and shown == unstable[:3]  # the unstable rows come first
    assert ("a", "J") not in shown  # the stable row is the first to go
    assert payload["rows_total"] == 6 and payload["rows_left_out"] == 3
    assert payload["rows_matter_left_out"] == 2  # e.g. (d, J), wrong in en only, past the limit
    assert len(payload["judgments"]["cond"]) == payload["rows"]["start"][-1] == 12  # their records only
    assert {payload["items"]["id"][i] for i in payload["texts"]["item"]} <= {item for item, _ in shown}
    unlimited = ExplorerData(data.judgments, data.texts, data.audit, data.conditions, row_limit=None)
    assert explorer_payload(unlimited)["rows_left_out"] == 0
    assert len(unstable_records(limited)) == 5  # the export is never capped


def _reference_rows(judgments: list[Judgment], conditions: list[str]) -> list[tuple[Any, ...]]:
    """The rules written out one row at a time (as the explorer first did), to check the vectorised
    rows against on random runs."""
    latest = {j.call_key(): j for j in judgments}
    groups: dict[tuple[str, str], list[Judgment]] = {}
    for key in sorted(latest):
        j = latest[key]
        groups.setdefault((j.item_id, j.judge), []).append(j)
    out = []
    for (item, judge), js in groups.items():
        pair = {
            (j.condition, j.order): (j.verdict.strip().lower() if j.verdict else None)
            for j in js
            if j.kind == "pair"
        }
        pair = {k: (None if v == "invalid" else v) for k, v in pair.items()}
        flipped = [
            c
            for c in conditions
            if c != "en"
            and any(
                pair.get(("en", o)) is not None
                and pair.get((c, o)) is not None
                and pair[("en", o)] != pair[(c, o)]
                for o in ("orig", "swap")
            )
        ]
        incon = [
            c
            for c in conditions
            if pair.get((c, "orig")) is not None
            and pair.get((c, "swap")) is not None
            and pair[(c, "orig")] != pair[(c, "swap")]
        ]
        label = js[0].label
        wrong = False
        if label is not None:
            en = [v for (c, _), v in pair.items() if c == "en" and v is not None]
            targets = [v for (c, _), v in pair.items() if c != "en" and v is not None]
            wrong = (
                any(v != str(label) for v in en) and bool(targets) and all(v == str(label) for v in targets)
            )
        out.append((item, judge, js[0].subset, label, flipped, incon, wrong))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_rows_agree_with_the_rules_one_row_at_a_time(seed: int) -> None:
    rng = np.random.default_rng(seed)
    judgments = []
    for judge in ("J", "K"):
        for i in range(30):
            label = None if rng.random() < 0.1 else int(rng.integers(1, 3))
            for cond in ("en", "zh", "ls"):
                for order in ("orig", "swap"):
                    if rng.random() < 0.1:
                        continue  # never judged
                    verdict = rng.choice(["1", "2", "tie", "invalid", "Tie ", "none"])
                    judgments.append(
                        _j(
                            f"i{i}",
                            cond,
                            order,
                            None if verdict == "none" else str(verdict),
                            judge=judge,
                            label=label,
                        )
                    )
    rows = explorer_rows(ExplorerData(judgments, conditions=["en", "zh", "ls"]))
    got = [(r.item_id, r.judge, r.subset, r.label, r.flipped, r.inconsistent, r.wrong_en_only) for r in rows]
    assert got == _reference_rows(judgments, ["en", "zh", "ls"])
    assert (
        any(r.flipped for r in rows)
        and any(r.inconsistent for r in rows)
        and any(r.wrong_en_only for r in rows)
    )


def test_the_row_limit_shrinks_with_the_conditions_a_row_carries() -> None:
    judgments = [
        _j(f"i{i}", cond, order, "1")
        for i in range(40)
        for cond in ("en", "zh", "ls", "de", "fr", "ja")
        for order in ("orig", "swap")
    ]
    data = ExplorerData(judgments, conditions=["en", "zh", "ls", "de", "fr", "ja"], row_limit=20)
    assert len(page_rows(data, explorer_rows(data))) == 0  # all stable: nothing that matters
    flipped = [*judgments, *(_j(f"i{i}", "de", "orig", "2") for i in range(40))]
    data = ExplorerData(flipped, conditions=["en", "zh", "ls", "de", "fr", "ja"], row_limit=20)
    assert len(page_rows(data, explorer_rows(data))) == 10  # 20 x 3 / 6 conditions
