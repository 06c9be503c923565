"""Test-wide safety and isolation.

Every test runs with JUDGEBENCH_OFFLINE_TESTS=1 (the client refuses any provider host that is not
127.0.0.1/localhost, so no test can reach a real API), a private cache folder, and no real API keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LLMBAR = REPO.parent / "shared" / "llmbar"

_KEY_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "OPENAI_COMPATIBLE_API_KEY",
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    monkeypatch.setenv("JUDGEBENCH_OFFLINE_TESTS", "1")
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # the embedded model's weights are assembled once per machine, not once per test
    monkeypatch.setenv("JUDGEBENCH_MODELS_DIR", str(Path.home() / ".cache" / "judgebench" / "models"))
    for var in _KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture
def llmbar_dir() -> Path:
    if not (LLMBAR / "Dataset" / "LLMBar").is_dir():
        pytest.skip("../shared/llmbar is not present")
    return LLMBAR


# Tests that took 15 s or more each in a whole-suite run (2026-12-03, 2 cores): slow, like every
# browser and embedded-model test, so that `python -m pytest -m "not slow"` is the quick subset.
# CI runs them all.
SLOW_TESTS = frozenset(
    {
        "tests/analysis/test_self_preference.py::test_planted_self_preference_is_flagged_and_inside_the_interval",
        "tests/analysis/test_sequential.py::test_capital_is_an_exact_martingale",
        "tests/cli/test_bbe_flags.py::test_fresh_verification_judges_new_neighbours",
        "tests/cli/test_first_hour_third.py::test_1_tables_at_80_columns_show_every_number_and_name_whole",
        "tests/cli/test_first_hour_third.py::test_4_m_rewardbench_conditions_narrow_the_languages_and_a_partial_snapshot_is_listed",
        "tests/cli/test_newcomer.py::test_8_an_infeasible_rerun_keeps_the_last_good_release",
        "tests/cli/test_newcomer.py::test_9_selftest_leaves_no_temp_folder",
        "tests/cli/test_report_gate.py::test_a_bare_gate_before_another_flag_is_the_plain_gate",
        "tests/cli/test_report_gate.py::test_an_interrupted_run_is_marked_incomplete_everywhere",
        "tests/cli/test_report_gate.py::test_gate_fails_on_a_fail_verdict",
        "tests/cli/test_report_gate.py::test_strict_gate_also_stops_on_inconclusive",
        "tests/cli/test_rewardbench_cli.py::test_run_on_three_languages_with_simulated_judges",
        "tests/compare/test_planted_drift.py::test_one_judge_on_two_seeds_shows_no_drift_beyond_the_noise",
        "tests/data/test_rewardbench_run.py::test_a_full_run_gives_per_language_flip_rates_tie_probes_and_readiness",
        "tests/data/test_rewardbench_run.py::test_twenty_three_languages_stay_legible",
        "tests/e2e/test_degenerate_judges.py::test_degenerate_judges_over_the_wire_get_no_pass",
        "tests/e2e/test_faults.py::test_faulty_server_gives_every_judgment_and_the_clean_metrics",
        "tests/e2e/test_hardening.py::test_a_report_killed_while_writing_leaves_the_old_set_whole",
        "tests/e2e/test_kill_resume.py::test_sigkill_at_random_points_then_resume",
        "tests/e2e/test_security.py::test_offline_sample_pipeline_opens_no_connection",
        "tests/e2e/test_security.py::test_planted_keys_reach_no_file_cache_or_output",
        "tests/e2e/test_structured_judging.py::test_a_structured_judge_stage_records_the_schema_and_its_short_replies_cost_less",
        "tests/human/test_planted.py::test_ppi_intervals_cover_the_truth_at_their_nominal_rate",
        "tests/judge/test_judge_local.py::test_local_model_judges_two_sample_items_in_every_condition",
        "tests/judge/test_until_settled.py::test_a_killed_run_is_incomplete_and_resumes_to_the_same_stop",
        "tests/judge/test_until_settled.py::test_each_judge_stops_where_its_verdict_is_known",
        "tests/models/test_local.py::test_a_real_llama_cpp_server_holds_the_reply_to_the_verdict_schema",
        "tests/probes/test_cli_probes.py::test_probes_through_the_cli_on_the_sample",
        "tests/probes/test_cli_probes.py::test_the_embedded_model_judges_probe_conditions",
        "tests/probes/test_planted.py::test_planted_probes_are_flagged_exactly_and_recovered",
        "tests/report/test_explorer_browser.py::test_a_full_size_run_opens_fast",
        "tests/report/test_explorer_browser.py::test_a_page_past_its_row_limit_says_what_it_left_out",
        "tests/report/test_explorer_browser.py::test_filters_apply",
        "tests/report/test_explorer_browser.py::test_screenshot_of_an_opened_view_is_not_blank",
        "tests/report/test_first_hour_report.py::test_6_chromium_shows_the_anchored_scale_and_the_position_limit",
        "tests/report/test_html_chromium.py::test_report_renders_with_its_plots",
        "tests/report/test_plots.py::test_titles_placed_outright_are_where_matplotlib_would_place_them",
        "tests/report/test_writer.py::test_writer_produces_every_file",
        "tests/test_answers.py::test_until_settled_rounds_frame_only_the_items_judged",
        "tests/test_bench_output_tokens.py::test_one_item_measured_through_llama_cpp_and_the_embedded_model",
        "tests/test_selftest.py::test_selftest_recovers_every_planted_value",
    }
)


_SLOW_TOO = ("browser", "local_model")
# Module fixtures that take 15 s or more to build (a sweep over hundreds of seeds): every test that
# uses one is slow, or the quick subset would still build it for the first quick test that asks.
SLOW_FIXTURES = frozenset(
    {
        ("tests/analysis/test_self_preference.py", "sweep"),
        ("tests/compare/test_planted_drift.py", "stable"),
        ("tests/human/test_planted.py", "outcomes"),
        ("tests/cli/test_report_gate.py", "runs"),
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A browser or embedded-model test is slow too, so `-m "not slow"` is the quick subset."""
    for item in items:
        slow_too = any(item.get_closest_marker(name) for name in _SLOW_TOO)
        slow_too = slow_too or item.nodeid.split("[", 1)[0] in SLOW_TESTS
        module = item.nodeid.split("::", 1)[0]
        uses = getattr(item, "fixturenames", ())
        slow_too = slow_too or any(module == m and name in uses for m, name in SLOW_FIXTURES)
        if slow_too and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
