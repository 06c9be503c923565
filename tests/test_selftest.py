"""The planted-bias self-test and the one-command pipeline, on simulated judges (offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api.selftest import expected_values, run_selftest
from judgebench.models.sim import SimScenario, pair_letter


def test_selftest_recovers_every_planted_value(tmp_path: Path) -> None:
    result = run_selftest(seed=3, items=250, run_dir=tmp_path, verify=200)
    failed = [c for c in result.checks if not c.passed]
    assert not failed, failed
    whats = {c.what for c in result.checks}
    # the planted quantities are all checked, not just some
    for needed in (
        "planted flip_rate in en->zh recovered",
        "planted flip_rate in en->ls recovered",
        "planted position_a_rate in en recovered",
        "planted tie_rate in en recovered",
        "planted invalid_rate in en recovered",
        "planted tie_probe_en_share in zh recovered",
        "planted strict_accuracy in ls recovered",
        "zh verdict must be PASS (no planted bias)",
        "ls verdict must be FAIL (planted 28% language flips)",
        "bbe violation rate <= delta",
    ):
        assert needed in whats
    # the degenerate judges (always A, always Tie, a coin) are each checked to get no pass
    degenerate = [c for c in result.checks if "must be NO PASS" in c.what]
    assert len(degenerate) == 6 and all(c.got != "pass" for c in degenerate)


def test_selftest_fails_when_the_expectation_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check can fail: claim a flip rate the simulator did not plant and it is caught."""
    import judgebench.api.selftest as st

    real = st.expected_values

    def wrong(s: SimScenario, conditions: list[str]) -> dict[tuple[str, str], float]:
        out = real(s, conditions)
        if ("flip_rate", "en->ls") in out and out[("flip_rate", "en->ls")] > 0:
            out[("flip_rate", "en->ls")] = 0.05
        return out

    monkeypatch.setattr(st, "expected_values", wrong)
    result = st.run_selftest(seed=1, items=150, run_dir=tmp_path, verify=50)
    assert not result.passed
    assert any(c.what == "planted flip_rate in en->ls recovered" and not c.passed for c in result.checks)


def test_closed_form_matches_the_simulator_by_counting() -> None:
    s = SimScenario(accuracy={"en": 0.7}, position_bias={"en": 0.3}, tie_rate=0.1, flip_rate={"zh": 0.25})
    exp = expected_values(s, ["zh"])
    n = 20000
    correct = {"en": 0, "zh": 0}
    a_count = {"en": 0, "zh": 0}
    for k in range(n):
        gold = "A" if k % 2 == 0 else "B"
        for cond in ("en", "zh"):
            letter = pair_letter(s, f"i{k}", "orig", cond, gold)
            correct[cond] += letter == gold
            a_count[cond] += letter == "A"
    for cond in ("en", "zh"):
        assert correct[cond] / n == pytest.approx(exp[("strict_accuracy", cond)], abs=0.015)
        assert a_count[cond] / n == pytest.approx(exp[("position_a_rate", cond)], abs=0.015)


def test_run_pipeline_on_the_bundled_sample_with_a_simulated_judge(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = api.run_pipeline(run, api.PipelineRequest(models=["sim:default"]))
    assert result.report_html is not None and result.report_html.exists()
    html = result.report_html.read_text(encoding="utf-8")
    assert "data:image/png;base64" in html
    judgments = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    assert len(judgments) == 30 * 8
    assert (run / "metrics.json").exists() and (run / "bbe.json").exists()
    bbe = json.loads((run / "bbe.json").read_text())
    assert bbe["tau"] == 0.5 and bbe["delta"] == 0.01 and bbe["calibrations"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert set(manifest["stages"]) >= {"translate", "judge", "report"}
    assert manifest["dataset"]["spec"] == "sample" and len(manifest["dataset"]["checksum"]) == 64


def test_run_command_passes_template_and_cache_flags(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from judgebench.cli import app
    from judgebench.config.paths import configs_dir

    run = tmp_path / "run"
    template = configs_dir() / "templates" / "judge_llmbar.toml"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--run",
            str(run),
            "--model",
            "sim:default",
            "--limit",
            "2",
            "--template",
            str(template),
            "--no-cache",
            "--tpm",
            "100000",
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 16 and {r["template"] for r in records} == {"llmbar-style-v1"}
    assert not any(r["from_cache"] for r in records)
