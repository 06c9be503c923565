"""Neighbour generators, and `bbe --perturb formatting --model M` re-judging through the provider layer
(the in-process `sim:` judge, so no network)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from judgebench.bbe import neighbours as nb
from judgebench.cli import app
from judgebench.data.dataset import load_dataset
from judgebench.models.sim import load_scenario, pair_letter
from judgebench.records import Item

runner = CliRunner()
TEXT = (
    "Use **bold** words. Then *stop* here.\n\n- first point\n- second point\n\n"
    "```py\n**kept** = 1\n- x\n```\n"
)


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", text.lower())


def test_emphasis_strip_and_add_keep_code() -> None:
    stripped = nb.strip_emphasis(TEXT)
    assert "**bold**" not in stripped and "*stop*" not in stripped
    assert "**kept** = 1" in stripped  # code blocks untouched
    added = nb.add_emphasis("One sentence. Two.\n\nAnother paragraph here.", np.random.default_rng(0))
    assert added.count("**") == 2
    assert _words(added) == _words("One sentence. Two.\n\nAnother paragraph here.")


def test_bullets_and_sentences() -> None:
    merged = nb.bullets_to_sentences(TEXT)
    assert "first point. second point." in merged
    assert "- x" in merged  # inside the code block
    listed = nb.sentences_to_bullets("Alpha is first. Beta is second! Gamma?")
    assert listed.splitlines() == ["- Alpha is first.", "- Beta is second!", "- Gamma?"]


def test_formatting_variant_changes_markup_not_words() -> None:
    for seed in range(12):
        out, op = nb.formatting_variant(TEXT, np.random.default_rng(seed))
        assert out != TEXT and op != "unchanged"
        assert _words(out) == _words(TEXT)
        assert "```py\n**kept** = 1\n- x\n```" in out


def test_reorder_criteria_is_a_renumbered_permutation() -> None:
    rubric = "Score on:\n1. accuracy\n2. completeness\n3. style\n4. length\nThanks."
    out = nb.reorder_criteria(rubric, np.random.default_rng(1))
    lines = out.splitlines()
    assert lines[0] == "Score on:" and lines[-1] == "Thanks."
    assert out != rubric
    assert [line.split(". ", 1)[0] for line in lines[1:5]] == ["1", "2", "3", "4"]
    assert sorted(line.split(". ", 1)[1] for line in lines[1:5]) == [
        "accuracy",
        "completeness",
        "length",
        "style",
    ]
    assert nb.reorder_criteria("no list here", np.random.default_rng(0)) == "no list here"


def test_swap_and_language_switch() -> None:
    assert nb.swap_order("a", "b") == ("b", "a")
    from judgebench.records import Variant

    v = Variant(item_id="x", condition="ls", instruction="i", output_1="1", output_2="2")
    assert nb.language_switch("x", "ls", {("x", "ls"): v}) is v
    assert nb.language_switch("x", "zh", {("x", "ls"): v}) is None


def test_perturb_item_fields() -> None:
    item = Item(
        id="a", subset="s", instruction="Do:\n- x\n- y", output_1="**Hi** there.", output_2="Plain. Text."
    )
    p = nb.perturb_item(item, "formatting", np.random.default_rng(0))
    assert p is not None and p.field in ("output_1", "output_2") and p.instruction == item.instruction
    c = nb.perturb_item(item, "criteria", np.random.default_rng(0))
    assert c is not None and c.field == "instruction" and c.instruction == "Do:\n- y\n- x"


def _sim_run(run: Path, judge: str) -> None:
    """en judgments exactly as the sim judge gives them, for the sample dataset."""
    scenario = load_scenario(judge.split(":", 1)[1])
    items = load_dataset("sample").items
    run.mkdir()
    (run / "manifest.json").write_text(
        json.dumps({"dataset": {"spec": "sample"}, "stages": {}, "history": []})
    )
    lines = []
    for item in items:
        for order in ("orig", "swap"):
            gold = "A" if (item.label == 1) == (order == "orig") else "B"
            letter = pair_letter(scenario, item.id, order, "en", gold)
            verdict = {"Tie": "tie", "invalid": "invalid"}.get(letter) or (
                ("1" if letter == "A" else "2") if order == "orig" else ("2" if letter == "A" else "1")
            )
            lines.append(
                json.dumps(
                    {
                        "judge": judge,
                        "item_id": item.id,
                        "subset": item.subset,
                        "kind": "pair",
                        "condition": "en",
                        "order": order,
                        "verdict": verdict,
                        "label": item.label,
                    }
                )
            )
    (run / "judgments.jsonl").write_text("\n".join(lines) + "\n")


def test_perturb_formatting_rejudges_through_the_client(tmp_path: Path) -> None:
    run = tmp_path / "run"
    judge = "sim:biased"
    _sim_run(run, judge)
    args = [
        "bbe",
        "--tau",
        "0.5",
        "--delta",
        "0.05",
        "--run",
        str(run),
        "--perturb",
        "formatting",
        "--model",
        judge,
        "--perturb-units",
        "20",
        "--plugin",
        "--certificate",
        "exact",  # in-sample: 20 re-judged units are too few for a certificate that carries over at alpha 1
        "--no-plot",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads((run / "bbe.json").read_text())
    pert = doc["source"]["perturbation"]
    assert pert["units_sampled"] == 20
    assert pert["requested"] + pert["unperturbable"] == 20
    records = [json.loads(x) for x in (run / nb.NEIGHBOURS_FILE).read_text().splitlines()]
    assert len(records) == pert["requested"] and {r["condition"] for r in records} == {"formatting"}
    assert all(r["perturbation"]["field"] in ("output_1", "output_2") for r in records)
    cal = doc["calibrations"][0]
    assert cal["judge"] == judge
    assert set(cal["neighbours"]) == {"formatting"}
    valid = cal["neighbours"]["formatting"]["pairs"]
    assert valid + sum(cal["invalid_neighbours"].values()) <= pert["requested"]
    # the simulated judge ignores formatting: every valid re-judged unit keeps its verdict
    assert cal["sensitivity_plugin"] == 0.0
    # a second run resumes: every neighbour already has its answer, so nothing is asked again (not
    # even the cache) and the release is the same
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert len((run / nb.NEIGHBOURS_FILE).read_text().splitlines()) == pert["requested"]
    assert json.loads((run / "bbe.json").read_text())["calibrations"] == doc["calibrations"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["stages"]["bbe"]["neighbours_judged"] == pert["requested"]
