"""Each importer on a file shaped like its source's: what it reads, the judgebench metrics on the imported
run against direct counts, the source's own headline number against an independent count, and a bad
line named by file and line."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from judgebench.analysis import ReportSettings
from judgebench.api import analyze_run, import_judgments, import_llmbar_results
from judgebench.api.report import ReportRequest, report
from judgebench.errors import InputError, RunDirError
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, RunDir, read_jsonl
from tests.conftest import LLMBAR
from tests.importers.shapes import (
    alpaca_rows,
    arena_hard_rows,
    fastchat_pair_rows,
    judgebench_rows,
    write_jsonl,
)

SETTINGS = ReportSettings(bootstrap_samples=0)


def _records(run: RunDir, judge: str, metric: str, condition: str = "en", subset: str = "all") -> list:
    analysis = analyze_run(run, SETTINGS)
    return [
        r
        for r in analysis.records
        if r.judge == judge
        and r.metric == metric
        and r.condition == condition
        and r.subset == subset
        and not r.filtered
    ]


def _one(run: RunDir, judge: str, metric: str, **kw: str):  # type: ignore[no-untyped-def]
    found = _records(run, judge, metric, **kw)
    assert len(found) == 1, (metric, found)
    return found[0]


# --- JudgeBench ----------------------------------------------------------------------------------------


def _judgebench_file(tmp_path: Path) -> tuple[Path, list[dict]]:
    rows = judgebench_rows()
    name = "dataset=judgebench,response_model=gpt-4o,judge_name=arena_hard,judge_model=claude-3-haiku.jsonl"
    return write_jsonl(tmp_path / "outputs" / name, rows), rows


def test_judgebench_score_and_accuracy_equal_independent_counts(tmp_path: Path) -> None:
    path, rows = _judgebench_file(tmp_path)
    run = RunDir(tmp_path / "run")
    result = import_judgments(run, "judgebench", [path])
    judge = "arena_hard/claude-3-haiku"
    assert list(result.judges) == [judge] and result.items == len(rows)

    # JudgeBench's score, counted from its rule: flip the second decision back, +1 right / -1 wrong
    def back(d: str | None) -> str | None:
        return {"A>B": "B>A", "B>A": "A>B"}.get(d or "", d)

    correct = 0
    for row in rows:
        first = row["judgments"][0]["decision"] if row["judgments"][0] else None
        second = back(row["judgments"][1]["decision"] if row["judgments"][1] else None)
        votes = [(d == row["label"]) - (d == back(row["label"])) for d in (first, second)]
        correct += sum(votes) > 0
    headline = {h.subset: h for h in result.judges[judge].headlines}
    assert headline["all"].value == pytest.approx(correct / len(rows)) and headline["all"].n == len(rows)
    assert _one(run, judge, "source:judgebench_score").value == pytest.approx(correct / len(rows))

    # judgebench's strict accuracy: over answered judgments (a null entry is a failed call, left out),
    # verdict = the output the decision names in that order, A=B and null decisions wrong
    right = answered = 0
    for row in rows:
        gold = "1" if row["label"] == "A>B" else "2"
        for order, entry in enumerate(row["judgments"]):
            if entry is None:
                continue
            answered += 1
            named = {"A>B": "A", "B>A": "B"}.get(entry["decision"] or "")
            output = None if named is None else ("1" if (named == "A") == (order == 0) else "2")
            right += output == gold
    acc = _one(run, judge, "strict_accuracy")
    assert (acc.n, acc.extras()["k"]) == (answered, right)
    assert any(row["judgments"][0] is None for row in rows)  # the fixture holds a failed call


def test_judgebench_keeps_each_source_line_and_checksum(tmp_path: Path) -> None:
    path, _ = _judgebench_file(tmp_path)
    run = RunDir(tmp_path / "run")
    import_judgments(run, "judgebench", [path])
    lines = path.read_text().splitlines()
    for j in read_jsonl(run.file(JUDGMENTS), Judgment):
        where = j.params["source"]
        number = int(where.rsplit(":", 1)[1])
        assert j.params["source_record"] == lines[number - 1]
    entry = next(iter(run.manifest().stages.imports.values()))
    assert entry.checksums == {str(path): hashlib.sha256(path.read_bytes()).hexdigest()}
    assert entry.format == "judgebench"
    again = import_judgments(run, "judgebench", [path])  # a repeated import adds nothing
    assert next(iter(again.judges.values())).appended == 0


def test_judgebench_bad_line_named(tmp_path: Path) -> None:
    path, rows = _judgebench_file(tmp_path)
    rows[4]["label"] = "A=B"
    write_jsonl(path, rows)
    with pytest.raises(InputError, match=rf"{re.escape(path.name)}, line 5, field 'label'"):
        import_judgments(RunDir(tmp_path / "run"), "judgebench", [path])
    rows[4]["label"] = "A>B"
    write_jsonl(path, rows)
    path.write_text(path.read_text().replace('"pair_id": "p7"', '"pair_id": "p7",,'))
    with pytest.raises(InputError, match=rf"{re.escape(path.name)}, line 8: not valid JSON"):
        import_judgments(RunDir(tmp_path / "run2"), "judgebench", [path])


# --- MT-Bench (FastChat) -------------------------------------------------------------------------------


def _longer(a: str, b: str) -> str | None:
    return None if len(a) == len(b) else ("1" if len(a) > len(b) else "2")


def _answers(row: dict) -> tuple[str, str]:
    prompt = row["g1_user_prompt"]
    if row["turn"] == 1:
        a = prompt.split("[The Start of Assistant A's Answer]\n")[1].split(
            "\n[The End of Assistant A's Answer]"
        )[0]
        b = prompt.split("[The Start of Assistant B's Answer]\n")[1].split(
            "\n[The End of Assistant B's Answer]"
        )[0]
    else:
        a = prompt.split("### Assistant A:\n")[2].split("\n\n<|The End")[0]
        b = prompt.split("### Assistant B:\n")[2].split("\n\n<|The End")[0]
    return a, b


def test_fastchat_pairs_flip_rate_longer_and_self_preference_equal_direct_counts(tmp_path: Path) -> None:
    rows = fastchat_pair_rows()
    path = write_jsonl(tmp_path / "model_judgment" / "gpt-4_pair.jsonl", rows)
    run = RunDir(tmp_path / "run")
    import_judgments(run, "mt-bench", [path])
    to_output = {"model_1": "1", "model_2": "2", "tie": "tie"}

    # flip on swap: over pairs whose two games both gave a verdict, the share that differ
    valid = [
        (r["g1_winner"], r["g2_winner"]) for r in rows if "error" not in (r["g1_winner"], r["g2_winner"])
    ]
    flips = sum(a != b for a, b in valid)
    pi = _one(run, "gpt-4", "position_inconsistency")
    assert (pi.n, pi.extras()["k"]) == (len(valid), flips)

    # the longer answer's wins: over games that named an answer, on pairs of unequal length
    wins = games = 0
    for row in rows:
        longer = _longer(*_answers(row))
        for game in ("g1_winner", "g2_winner"):
            named = to_output.get(row[game])
            if longer is None or named not in ("1", "2"):
                continue
            games += 1
            wins += named == longer
    lw = _one(run, "gpt-4", "longer_win_rate")
    assert (lw.n, lw.extras()["k"]) == (games, wins) and games > 20

    # self-preference: pairs with a gpt-4 answer, the share of verdicts for it (a tie half), by item
    shares = []
    for row in rows:
        if "gpt-4" not in (row["model_1"], row["model_2"]):
            continue
        own = "1" if row["model_1"] == "gpt-4" else "2"
        votes = [to_output[row[g]] for g in ("g1_winner", "g2_winner") if row[g] in to_output]
        if votes:
            shares.append(sum(1.0 if v == own else 0.5 if v == "tie" else 0.0 for v in votes) / len(votes))
    analysis = analyze_run(run, SETTINGS)
    row = next(r for r in analysis.self_preference.rows if r.judge == "gpt-4" and r.condition == "en")
    assert row.family == "openai" and row.items == len(shares)
    assert row.own_win_rate == pytest.approx(sum(shares) / len(shares))
    assert row.excess is None and "no gold labels" in (row.note or "")


def test_mt_bench_human_judgments_joined_and_agreement_by_fastchat_convention(tmp_path: Path) -> None:
    rows = fastchat_pair_rows(n=40)
    path = write_jsonl(tmp_path / "gpt-4_pair.jsonl", rows)
    human = []
    for i, row in enumerate(rows[:30]):  # humans name model_a/model_b in either order
        a, b = (row["model_1"], row["model_2"]) if i % 2 else (row["model_2"], row["model_1"])
        winner = ("model_a", "model_b", "tie", "tie (bothbad)")[i % 4]
        human.append({"question_id": row["question_id"], "model_a": a, "model_b": b, "winner": winner,
                      "judge": f"expert_{i % 3}", "turn": row["turn"]})  # fmt: skip
    human.append(
        {"question_id": 999, "model_a": "x", "model_b": "y", "winner": "tie", "judge": "e", "turn": 1}
    )
    hpath = tmp_path / "human_judgments.json"
    hpath.write_text(json.dumps(human, indent=1))
    result = import_judgments(RunDir(tmp_path / "run"), "mt-bench", [path], human=[hpath])
    assert result.human_labels == 30 and any("1 human votes" in n for n in result.notes)
    # the independent count: the judge's vote is its winner if both games agree, else a tie
    agree = {1: [0, 0], 2: [0, 0]}
    agree_nt = {1: [0, 0], 2: [0, 0]}
    for i, h in enumerate(human[:30]):
        row = rows[i]
        g = {row["g1_winner"], row["g2_winner"]}
        vote = next(iter(g)) if len(g) == 1 and g <= {"model_1", "model_2"} else "tie"
        judge_model = row[vote] if vote != "tie" else "tie"
        human_model = h[h["winner"]] if h["winner"] in ("model_a", "model_b") else "tie"
        agree[row["turn"]][0] += judge_model == human_model
        agree[row["turn"]][1] += 1
        if "tie" not in (judge_model, human_model):
            agree_nt[row["turn"]][0] += judge_model == human_model
            agree_nt[row["turn"]][1] += 1
    heads = {(h.name, h.subset): h for h in result.judges["gpt-4"].headlines}
    for turn in (1, 2):
        with_ties = heads[("mt_bench_agreement_with_ties", f"turn-{turn}")]
        assert (with_ties.value, with_ties.n) == (agree[turn][0] / agree[turn][1], agree[turn][1])
        if agree_nt[turn][1]:
            without = heads[("mt_bench_agreement_without_ties", f"turn-{turn}")]
            assert (without.value, without.n) == (agree_nt[turn][0] / agree_nt[turn][1], agree_nt[turn][1])
    # and the labels feed the report's human section
    report(RunDir(tmp_path / "run"), ReportRequest(settings=SETTINGS, human=Path(result.human_file or "")))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    agreement = [m for m in metrics if m["metric"] == "human_agreement" and m["judge"] == "gpt-4"]
    assert agreement and all(0 <= m["value"] <= 1 for m in agreement)
    sources = {m["metric"] for m in metrics if m["metric"].startswith("source:")}
    assert sources == {"source:mt_bench_agreement_with_ties", "source:mt_bench_agreement_without_ties"}


def test_mt_bench_bad_line_named(tmp_path: Path) -> None:
    rows = fastchat_pair_rows(n=6)
    rows[3]["g1_user_prompt"] = "no template here"
    path = write_jsonl(tmp_path / "gpt-4_pair.jsonl", rows)
    with pytest.raises(InputError, match=r"gpt-4_pair.jsonl, line 4, field 'g1_user_prompt'"):
        import_judgments(RunDir(tmp_path / "run"), "mt-bench", [path])


# --- Arena-Hard ----------------------------------------------------------------------------------------


def test_arena_hard_games_and_score_mapping(tmp_path: Path) -> None:
    rows = arena_hard_rows()
    path = write_jsonl(tmp_path / "model_judgment" / "gpt-4-1106-preview" / "llama-3-8b.jsonl", rows)
    run = RunDir(tmp_path / "run")
    result = import_judgments(run, "arena-hard", [path])
    # show_result.py's mapping, counted here: the model's share per game, >> three times
    weight = {"A>>B": 3, "A>B": 1, "A=B": 1, "B>A": 1, "B>>A": 3}
    scores: list[float] = []
    for row in rows:
        s1, s2 = (g["score"] for g in row["games"])
        if s1 is None or s2 is None:
            continue
        for s, model_letter in ((s1, "B"), (s2, "A")):
            share = 0.5 if s == "A=B" else (1.0 if s[0] == model_letter else 0.0)
            scores += [share] * weight[s]
    head = result.judges["gpt-4-1106-preview"].headlines[0]
    assert (head.name, head.system) == ("arena_hard_score", "llama-3-8b")
    assert head.value == pytest.approx(sum(scores) / len(scores))
    # judgments: orig = game 1 (baseline is output_1, shown as A), swap = game 2
    got = {(j.item_id, j.order): j for j in read_jsonl(run.file(JUDGMENTS), Judgment)}
    first = rows[0]["games"]
    for order, game in (("orig", first[0]), ("swap", first[1])):
        j = got[("u0/llama-3-8b", order)]
        expected = {"A>>B": "A", "A>B": "A", "A=B": "Tie", "B>A": "B", "B>>A": "B", None: "invalid"}[
            game["score"]
        ]
        assert j.winner == expected
    pi = _one(run, "gpt-4-1106-preview", "position_inconsistency")
    assert pi.n > 0


def test_arena_hard_bad_line_named(tmp_path: Path) -> None:
    rows = arena_hard_rows(n=5)
    del rows[2]["model"]
    path = write_jsonl(tmp_path / "llama.jsonl", rows)
    with pytest.raises(InputError, match=r"llama.jsonl, line 3, field 'model'"):
        import_judgments(RunDir(tmp_path / "run"), "arena-hard", [path])


# --- AlpacaEval ----------------------------------------------------------------------------------------


def test_alpaca_eval_annotations_win_rates(tmp_path: Path) -> None:
    rows = alpaca_rows()
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows, indent=2))
    run = RunDir(tmp_path / "run")
    result = import_judgments(run, "alpaca-eval", [path])
    prefs = [r["preference"] for r in rows if r["preference"] is not None]
    heads = {h.name: h for h in result.judges["weighted_alpaca_eval_gpt4_turbo"].headlines}
    assert heads["alpaca_eval_win_rate"].value == pytest.approx(sum(p - 1 for p in prefs) / len(prefs))
    discrete = [0.5 if p == 1.5 else (1.0 if p > 1.5 else 0.0) for p in prefs]
    assert heads["alpaca_eval_discrete_win_rate"].value == pytest.approx(sum(discrete) / len(discrete))
    assert heads["alpaca_eval_win_rate"].system == "my-model"
    # every record is one judgment; its raw text and line kept
    judgments = list(read_jsonl(run.file(JUDGMENTS), Judgment))
    assert len(judgments) == len(rows) and all(j.params["source"].startswith(str(path)) for j in judgments)


def test_alpaca_eval_bad_record_named(tmp_path: Path) -> None:
    rows = alpaca_rows(n=4)
    rows[2]["preference"] = 3.5
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows, indent=2))
    line = path.read_text().splitlines().index("  {", 1 + path.read_text().splitlines().index("  {", 2)) + 1
    with pytest.raises(InputError, match=rf"annotations.json, line {line}, field 'preference'"):
        import_judgments(RunDir(tmp_path / "run"), "alpaca-eval", [path])


# --- generic -------------------------------------------------------------------------------------------


def _generic_rows() -> list[dict]:
    rows = []
    for i in range(12):
        for order in ("orig", "swap"):
            rows.append(
                {"item_id": f"q{i}", "judge": "in-house", "order": order, "output_1": "x" * (i + 1),
                 "output_2": "y" * 5, "instruction": f"q {i}", "label": 1 + i % 2,
                 "verdict": ("1", "2", "tie")[(i + (order == "swap")) % 3], "confidence": 0.7,
                 "human_label": ("1", "2")[i % 2], "annotator": "ann"}
            )  # fmt: skip
    return rows


def test_generic_jsonl_and_csv_read_alike(tmp_path: Path) -> None:
    rows = _generic_rows()
    jsonl = write_jsonl(tmp_path / "log.jsonl", rows)
    csv_path = tmp_path / "log.csv"
    fields = list(rows[0])
    csv_path.write_text(
        ",".join(fields) + "\n" + "".join(",".join(str(r[f]) for f in fields) + "\n" for r in rows)
    )
    runs = {}
    for name, path in (("j", jsonl), ("c", csv_path)):
        run = RunDir(tmp_path / name)
        result = import_judgments(run, "generic", [path])
        assert result.human_labels == 12
        acc = _one(run, "in-house", "strict_accuracy")
        runs[name] = (acc.n, acc.extras()["k"])
    right = sum(str(r["verdict"]) == str(r["label"]) for r in rows)
    assert runs["j"] == runs["c"] == (len(rows), right)


def test_generic_bad_csv_row_named(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("item_id,judge,verdict,output_1,output_2\nq1,j,1,a,b\nq2,j,maybe,a,b\n")
    with pytest.raises(InputError, match=r"log.csv, line 3, field 'verdict'"):
        import_judgments(RunDir(tmp_path / "run"), "generic", [path])


def test_a_run_with_other_items_is_refused(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    import_judgments(run, "generic", [write_jsonl(tmp_path / "a.jsonl", _generic_rows())])
    other = _generic_rows()
    other[0]["output_1"] = "changed"
    other[1]["output_1"] = "changed"
    with pytest.raises(RunDirError, match="import into a new --run folder"):
        import_judgments(run, "generic", [write_jsonl(tmp_path / "b.jsonl", other)])


def test_counts_by_judge_are_kept(tmp_path: Path) -> None:
    """Two judges in one generic file: one manifest entry each."""
    rows = _generic_rows()
    for r in rows[:6]:
        r["judge"] = "other"
    result = import_judgments(RunDir(tmp_path / "run"), "generic", [write_jsonl(tmp_path / "a.jsonl", rows)])
    counts = defaultdict(int)
    for r in rows:
        counts[r["judge"]] += 1
    assert {k: v.judgments for k, v in result.judges.items()} == dict(counts)


def test_a_moved_imported_run_reads_its_own_items(tmp_path: Path) -> None:
    """The items live in the run folder: a copied run reads its own copy, not the original's."""
    first = RunDir(tmp_path / "first")
    import_judgments(first, "generic", [write_jsonl(tmp_path / "a.jsonl", _generic_rows())])
    shutil.copytree(first.path, tmp_path / "moved")
    shutil.rmtree(first.path)
    moved = RunDir(tmp_path / "moved")
    rate = _one(moved, "in-house", "longer_win_rate")  # needs the items' texts
    assert rate.n > 0


def test_alpaca_eval_cross_annotations_joined_as_human_labels(tmp_path: Path) -> None:
    rows = [r for r in alpaca_rows(n=12) if r["preference"] is not None]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows))
    humans = []
    for i, row in enumerate(rows):
        for annotator in range(2):
            pref = (1.0, 2.0, 1.5)[(i + annotator) % 3]
            humans.append({**{k: row[k] for k in ("instruction", "output_1", "output_2")},
                           "preference": pref, "annotator_index": annotator})  # fmt: skip
    humans.append({"instruction": "not imported", "output_1": "a", "output_2": "b", "preference": 1.0})
    hpath = tmp_path / "cross.json"
    hpath.write_text(json.dumps(humans))
    result = import_judgments(RunDir(tmp_path / "run"), "alpaca-eval", [path], human=[hpath])
    assert result.human_labels == 2 * len(rows) and any("1 human annotations" in n for n in result.notes)
    written = [json.loads(line) for line in Path(result.human_file or "").read_text().splitlines()]
    expected = [("1", "2", "tie")[(i + a) % 3] for i in range(len(rows)) for a in range(2)]
    assert [w["label"] for w in written] == expected
    assert {w["annotator"] for w in written} == {"0", "1"}


@pytest.mark.llmbar
def test_llmbar_results_through_the_registry_equal_the_command(tmp_path: Path) -> None:
    if not LLMBAR.is_dir():
        pytest.skip("../shared/llmbar not present")
    import_llmbar_results(RunDir(tmp_path / "a"), LLMBAR, "GPT-4/Vanilla")
    result = import_judgments(
        RunDir(tmp_path / "b"), "llmbar-results", [LLMBAR], settings={"evaluator": "GPT-4/Vanilla"}
    )
    assert result.judges["GPT-4/Vanilla"].judgments == 838

    def calls(run: str) -> list[tuple]:
        return sorted(
            (j.item_id, j.order, j.verdict) for j in read_jsonl(tmp_path / run / JUDGMENTS, Judgment)
        )

    assert calls("a") == calls("b")
