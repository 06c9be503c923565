"""M-RewardBench through the pipeline: its languages become conditions whose variants come from the
dataset (no translator call, the audit still runs), tie-probes for every target, and a full run with
simulated judges over three languages gives per-language flip rates and readiness verdicts."""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path

import pytest

from judgebench.api import JudgeRequest, PipelineRequest, TranslateRequest, judge, run_pipeline, translate
from judgebench.api.report import analyze_run
from judgebench.data.rewardbench import language_configs
from judgebench.errors import ConfigError, InputError
from judgebench.records import Metric
from judgebench.store.run_folder import AUDIT, VARIANTS, RunDir
from tests.data.rewardbench_fixture import (
    FIXTURE_IDS,
    FIXTURE_NOT_IN_JA,
    english_rows,
    language_file,
    language_rows,
    write_parquet,
    write_snapshot,
)

N = len(FIXTURE_IDS) - 1  # items of the fixture's M-RewardBench (one RewardBench record is in no language)
PER_LANGUAGE = {"zh": N, "ja": N - 1, "de": N}


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_snapshot(tmp_path / "hub")


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_translate_imports_the_dataset_variants_without_a_translator(snapshot: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = translate(
        run, TranslateRequest(dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ja,de")
    )
    assert result.outcome is None  # no translator was called
    assert result.imported == sum(PER_LANGUAGE.values())
    variants = lines(run / VARIANTS)
    assert {v["source"] for v in variants} == {"dataset:m-rewardbench"}
    assert (run / AUDIT).exists()
    assert result.flags == 0
    manifest = RunDir(run).manifest()
    assert manifest.stages.translate is not None
    assert manifest.stages.translate.translator == "dataset:m-rewardbench:zh,ja,de"
    # the languages asked for are the conditions asked for: the dataset is narrowed to them
    assert manifest.dataset is not None and manifest.dataset.spec == "m-rewardbench:zh,ja,de"
    assert len(manifest.dataset.files) == 4  # RewardBench and the three languages asked for
    assert set(manifest.dataset.conditions) == {"en", "zh", "ja", "de"}
    again = translate(
        run, TranslateRequest(conditions="zh,ja,de")
    )  # the manifest's dataset; nothing new to import
    assert again.imported == 0
    assert len(lines(run / VARIANTS)) == len(variants)


def test_the_audit_still_runs_and_flags_dataset_variants(snapshot: Path, tmp_path: Path) -> None:
    rows = language_rows("zh", english_rows())
    rows[0] = {**rows[0], "chosen": "水果很健康。"}  # the numbers of the English text are gone
    write_parquet(language_file(snapshot, "zh"), rows)
    result = translate(
        tmp_path / "run", TranslateRequest(dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh")
    )
    flags = lines(tmp_path / "run" / AUDIT)
    assert result.flags >= 1
    assert {f["item_id"] for f in flags} == {f"rewardbench/{rows[0]['id']}"}
    assert {f["condition"] for f in flags} == {"zh"}


def test_a_language_the_copy_lacks_is_a_clear_error(tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "hub", languages=("zh", "ja", "de"))
    with pytest.raises(InputError, match=r"ko \(kor_Hang\)") as info:
        translate(
            tmp_path / "run",
            TranslateRequest(dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ko"),
        )
    assert "m-rewardbench:de,ja,zh" in str(info.value)  # what the copy holds
    assert not (tmp_path / "run").exists()
    with pytest.raises(ConfigError, match="ko: not asked for") as config:
        translate(
            tmp_path / "run",
            TranslateRequest(dataset="m-rewardbench:zh,ja,de", data_dir=str(snapshot), conditions="zh,ko"),
        )
    assert "holds de, ja, zh" in str(config.value)
    assert not (tmp_path / "run").exists()


def test_a_condition_the_dataset_lacks_still_needs_a_translator(snapshot: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot translate"):
        translate(
            tmp_path / "run",
            TranslateRequest(
                dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ls", translator="sim:unbiased"
            ),
        )


def test_judge_dry_run_plans_pairs_and_tie_probes_per_language(snapshot: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    translate(run, TranslateRequest(dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ja,de"))
    estimates = judge(run, JudgeRequest(models=["sim:unbiased"], dry_run=True)).estimates
    pairs = 2 * (N + sum(PER_LANGUAGE.values()))
    probes = 2 * sum(PER_LANGUAGE.values())
    assert [e.calls for e in estimates] == [pairs + probes]


def test_run_dry_run_plans_the_whole_study_exactly_before_anything_exists(
    snapshot: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    result = run_pipeline(
        run,
        PipelineRequest(
            dataset="m-rewardbench",
            data_dir=str(snapshot),
            models=["openai:gpt-4.1-mini"],
            conditions="zh,ja,de",
            dry_run=True,
        ),
    )
    pairs = 2 * (N + sum(PER_LANGUAGE.values()))
    probes = 2 * sum(PER_LANGUAGE.values())
    calling = [e for e in result.estimates if e.calls]  # bbe and report make none (timed only)
    assert [(e.stage, e.calls) for e in calling] == [("judge", pairs + probes)]
    assert result.estimates[0].cost_live_usd is not None and result.estimates[0].cost_live_usd > 0
    assert not run.exists()


def test_run_dry_run_plans_in_memory_as_judge_dry_run_and_plan_do(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --dry-run` imported the dataset's variants into a scratch run (a temporary folder) to plan
    them; now the judge stage's own planning takes them in memory, and `judge --dry-run` (with
    --dataset and --conditions) and `plan` price the same plan: the exact one, items missing in a
    language left out and a tie-probe per target, as `judge --dry-run` prices after translate."""
    from judgebench.api import PlanRequest, plan_study

    scratch: list[object] = []
    real = tempfile.TemporaryDirectory

    def watched(*args: object, **kwargs: object) -> tempfile.TemporaryDirectory[str]:
        scratch.append(kwargs.get("prefix"))
        return real(*args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(tempfile, "TemporaryDirectory", watched)
    models = ["openai:gpt-4.1-mini", "sim:unbiased"]
    study = {"dataset": "m-rewardbench", "data_dir": str(snapshot), "models": models}
    piped = run_pipeline(tmp_path / "p", PipelineRequest(**study, conditions="zh,ja,de", dry_run=True))
    assert scratch == [] and not (tmp_path / "p").exists()  # no scratch run, no run folder
    judged = judge(tmp_path / "j", JudgeRequest(**study, conditions="en,zh,ja,de", dry_run=True))
    planned = plan_study(PlanRequest(**study, conditions="en,zh,ja,de"))
    exact = tmp_path / "exact"
    translate(exact, TranslateRequest(dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ja,de"))
    after = judge(exact, JudgeRequest(models=models, dry_run=True)).estimates

    def figures(estimates: list) -> list[tuple[object, ...]]:  # type: ignore[type-arg]
        return sorted(
            (e.model, e.calls, e.already_done, e.input_tokens, e.output_tokens, e.cost_live_usd)
            for e in estimates
            if e.stage == "judge"
        )

    pairs = 2 * (N + sum(PER_LANGUAGE.values()))  # ja lacks one item: not planned in ja
    probes = 2 * sum(PER_LANGUAGE.values())
    assert {e.calls for e in after} == {pairs + probes}
    assert figures(piped.estimates) == figures(judged.estimates) == figures(after)
    assert figures(planned.estimates) == figures(after)
    assert planned.calls_per_judge == dict.fromkeys(models, pairs + probes)
    assert "zh, ja, de: costed at the dataset's own variants" in planned.assumptions
    assert not any("en text's tokens" in a for a in planned.assumptions)
    assert any("planned from the dataset's own variants" in n for n in judged.notes)
    assert not any("priced from the en texts" in n for n in judged.notes)
    # a run whose en calls are made: those are done, the rest still to make, as before
    run = tmp_path / "resumed"
    judge(run, JudgeRequest(models=["sim:unbiased"], dataset="m-rewardbench:zh,ja,de", data_dir=str(snapshot),
                            conditions="en"))  # fmt: skip
    resumed = run_pipeline(
        run, PipelineRequest(**{**study, "models": ["sim:unbiased"]}, conditions="zh,ja,de", dry_run=True)
    )
    assert [(e.calls, e.already_done) for e in resumed.estimates if e.stage == "judge"] == [
        (pairs + probes - 2 * N, 2 * N)
    ]
    assert scratch == []


def test_a_dry_run_plans_the_dataset_languages_exactly_and_ls_from_the_en_text(
    snapshot: Path, tmp_path: Path
) -> None:
    """ja and de from M-RewardBench, ls to translate: ja and de are planned from the dataset's own
    variants (ja's missing item left out, a tie-probe per item), ls from the en texts (every item,
    no tie-probe); before, one condition to translate made every target a stand-in."""
    study = {"dataset": "m-rewardbench", "data_dir": str(snapshot), "models": ["sim:unbiased"]}
    judged = judge(tmp_path / "j", JudgeRequest(**study, conditions="en,ja,de,ls", dry_run=True))
    ja, de = PER_LANGUAGE["ja"], PER_LANGUAGE["de"]
    exact = 2 * (N + ja + de + N) + 2 * (ja + de)
    assert ja < N and [e.calls for e in judged.estimates] == [exact]
    assert any(n.startswith("ja, de: planned from the dataset's own variants") for n in judged.notes)
    assert any(n.startswith("ls: not translated yet, priced from the en texts") for n in judged.notes)
    asked = PipelineRequest(**study, conditions="ja,de,ls", translator="openai:gpt-4.1-mini", dry_run=True)
    piped = run_pipeline(tmp_path / "p", asked)
    assert [e.calls for e in piped.estimates if e.stage == "judge"] == [exact]
    assert not (tmp_path / "j").exists() and not (tmp_path / "p").exists()


def test_a_full_run_gives_per_language_flip_rates_tie_probes_and_readiness(
    snapshot: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    result = run_pipeline(
        run,
        PipelineRequest(
            dataset="m-rewardbench",
            data_dir=str(snapshot),
            models=["sim:biased", "sim:unbiased"],
            conditions="zh,ja,de",
        ),
    )
    assert result.report_html is not None and result.report_html.exists()
    analysis = analyze_run(run)
    assert analysis.conditions == ["en", "zh", "de", "ja"]  # zh first, then the others sorted
    flips = {
        (r.judge, r.condition): r
        for r in analysis.records
        if r.metric == Metric.FLIP_RATE and r.subset == "all" and not r.filtered
    }
    for judge_name in ("sim:biased", "sim:unbiased"):
        for target, count in PER_LANGUAGE.items():
            record = flips[(judge_name, f"en->{target}")]
            assert record.value is not None
            assert record.n is not None and record.n <= 2 * count
    # the planted zh flips of the biased judge show; the invariant judge flips nowhere
    assert flips[("sim:biased", "en->zh")].value > 0.1
    assert all(flips[("sim:unbiased", f"en->{t}")].value == 0.0 for t in PER_LANGUAGE)
    probes = {
        r.condition
        for r in analysis.records
        if r.metric == Metric.TIE_PROBE_TIE and r.subset == "all" and not r.filtered
    }
    assert probes >= set(PER_LANGUAGE)
    verdicts = {(v.judge, v.condition): v.status for v in analysis.readiness}
    assert set(verdicts) == {(j, t) for j in ("sim:biased", "sim:unbiased") for t in PER_LANGUAGE}
    assert verdicts[("sim:biased", "zh")] in {"fail", "inconclusive"}  # a few items per language: issue 40
    judgments = lines(run / "judgments.jsonl")
    ja_items = {j["item_id"] for j in judgments if j["condition"] == "ja"}
    assert f"rewardbench/{FIXTURE_NOT_IN_JA}" not in ja_items and len(ja_items) == N - 1
    report_md = (run / "report.md").read_text(encoding="utf-8")
    assert "Chat Hard" in report_md and "en->ja" in report_md
    # the leaderboard-comparable scores, with M-RewardBench's own weights, in every output
    scores = [r for r in json.loads((run / "metrics.json").read_text()) if r["metric"] == "rewardbench_score"]
    assert {(r["judge"], r["condition"]) for r in scores if r["subset"] == "all"} == {
        (j, c) for j in ("sim:biased", "sim:unbiased") for c in ("en", *PER_LANGUAGE)
    }
    assert {r["weights"] for r in scores} == {"m-rewardbench"}
    assert all(r["ci_low"] <= r["value"] <= r["ci_high"] for r in scores)
    drops = {
        (r.judge, r.condition): r.value
        for r in analysis.records
        if r.metric == Metric.REWARDBENCH_SCORE_DROP and r.subset == "all"
    }
    assert drops[("sim:biased", "en->zh")] < -0.05  # the planted zh bias costs score
    assert all(drops[("sim:unbiased", f"en->{t}")] == 0.0 for t in PER_LANGUAGE)
    assert "RewardBench score (comparable with the leaderboards)" in report_md
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "RewardBench score (comparable with the leaderboards)" in html and "Δ vs en pts" in html


@pytest.mark.slow
def test_twenty_three_languages_stay_legible(tmp_path: Path) -> None:
    """All of M-RewardBench's languages: one row per language (zh first, then sorted by code), en->c
    pairs only (no 253 target pairs), and plots drawn one group / row per language."""
    configs = language_configs()
    snapshot = write_snapshot(tmp_path / "hub", languages=sorted(configs))
    run = tmp_path / "run"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_pipeline(
            run,
            PipelineRequest(
                dataset="m-rewardbench",
                data_dir=str(snapshot),
                models=["sim:biased", "sim:unbiased"],
                conditions=",".join(configs),
            ),
        )
    assert not [w for w in caught if "constrained_layout" in str(w.message)]
    analysis = analyze_run(run)
    targets = [c for c in analysis.conditions if c != "en"]
    assert len(targets) == 23
    assert targets == ["zh", *sorted(t for t in targets if t != "zh")]
    pairs = {r.condition for r in analysis.records if r.metric == Metric.FLIP_RATE}
    assert pairs == {f"en->{t}" for t in targets}
    assert len({v.condition for v in analysis.readiness}) == 23
    report_md = (run / "report.md").read_text(encoding="utf-8")
    rows = [line for line in report_md.splitlines() if line.startswith("| sim:biased | en->")]
    assert [line.split(" | ")[1] for line in rows[:23]] == [f"en->{t}" for t in targets]
    # the sensitivity tables get a row per language, not three columns per language
    assert "| Judge | Condition | all % | filtered % | Δ pts (n) |" in report_md
    assert {p.name for p in (run / "plots").iterdir()} >= {"accuracy.png", "flips.png", "subset_heatmap.png"}


def test_run_on_the_llmbar_part_only(snapshot: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    common = PipelineRequest(
        dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ja,de", subset="llmbar"
    )
    dry = run_pipeline(run, common.model_copy(update={"models": ["openai:gpt-4.1-mini"], "dry_run": True}))
    assert [e.calls for e in dry.estimates if e.stage == "judge"] == [2 * 10 + 4 * 3 * 10]  # 5 subsets x 2
    run_pipeline(run, common.model_copy(update={"models": ["sim:unbiased"]}))
    judged = {j["item_id"] for j in lines(run / "judgments.jsonl")}
    assert len(judged) == 10
    assert all(v["item_id"] in judged for v in lines(run / VARIANTS))


def test_ls_is_still_translated_on_top_of_the_dataset(snapshot: Path, tmp_path: Path) -> None:
    """zh comes from M-RewardBench, ls from a translator (a 127.0.0.1 OpenAI-compatible server)."""
    from judgebench.api import CallOptions, SettingsOverrides
    from tests.servers.openai_server import OpenAIServer
    from tests.translate.test_translate_stage import SPEC, ScriptedTranslator

    run = tmp_path / "run"
    with OpenAIServer(ScriptedTranslator()) as server:
        options = CallOptions(
            settings=SettingsOverrides(base_url=server.base_url, timeout=5, max_retries=1), progress=False
        )
        result = translate(
            run,
            TranslateRequest(
                dataset="m-rewardbench", data_dir=str(snapshot), conditions="zh,ls", translator=SPEC
            ),
            options=options,
        )
        asked = [r.body["messages"][1]["content"] for r in server.requests]
    assert result.imported == N
    assert result.outcome is not None and result.outcome.translated == N
    assert asked and all('- "ls":' in text and '- "zh":' not in text for text in asked)
    by_source: dict[str, set[object]] = {}
    for v in lines(run / VARIANTS):
        by_source.setdefault(str(v["source"]), set()).add(v["condition"])
    assert by_source["dataset:m-rewardbench"] == {"zh"}
    assert all(conds == {"ls"} for source, conds in by_source.items() if source != "dataset:m-rewardbench")
    manifest = RunDir(run).manifest()
    assert manifest.stages.translate is not None
    assert manifest.stages.translate.translator.endswith("+ dataset:m-rewardbench:zh")
    estimates = judge(run, JudgeRequest(models=["sim:unbiased"], dry_run=True)).estimates
    assert [e.calls for e in estimates] == [2 * 3 * N + 2 * N]  # en, zh, ls pairs; zh tie-probes only
