"""Each flag's default has one home (issue 25): `judgebench.defaults`. The request models and the
CLI read it from there, so the CLI's default and the library's agree, and no other module writes
the number again."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench import api, defaults
from judgebench.cli import app, bbe_cmd, judge_cmd, plan_cmd, run_cmd, translate_cmd
from judgebench.models import ProviderSettings

SRC = Path(__file__).resolve().parents[1] / "src" / "judgebench"

# (CLI command, its parameter, the request model, its field, the default's home)
PAIRS = [
    (judge_cmd.judge_command, "round_items", api.JudgeRequest, "round_items", defaults.ROUND_ITEMS),
    (run_cmd.run_command, "round_items", api.PipelineRequest, "round_items", defaults.ROUND_ITEMS),
    (plan_cmd.plan_command, "round_items", api.PlanRequest, "round_items", defaults.ROUND_ITEMS),
    (run_cmd.run_command, "tau", api.PipelineRequest, "tau", defaults.TAU),
    (run_cmd.run_command, "delta", api.PipelineRequest, "delta", defaults.DELTA),
    (run_cmd.run_command, "conditions", api.PipelineRequest, "conditions", defaults.CONDITIONS),
    (run_cmd.run_command, "dataset", api.PipelineRequest, "dataset", defaults.DATASET),
    (plan_cmd.plan_command, "conditions", api.PlanRequest, "conditions", defaults.CONDITIONS),
    (plan_cmd.plan_command, "concurrency", api.PlanRequest, "concurrency", defaults.CONCURRENCY),
    (plan_cmd.plan_command, "latency", api.PlanRequest, "latency_s", defaults.PLAN_LATENCY_S),
    (plan_cmd.plan_command, "sim_seeds", api.PlanRequest, "sim_seeds", defaults.PLAN_SIM_SEEDS),
    (plan_cmd.plan_command, "discordant", api.PlanRequest, "discordant", defaults.PLAN_DISCORDANT),
    (translate_cmd.translate_command, "translator", api.TranslateRequest, "translator", defaults.MODEL),
    (bbe_cmd.bbe_command, "perturb_units", api.PerturbRequest, "units", defaults.PERTURB_UNITS),
    (judge_cmd.judge_command, "poll_interval", api.Execution, "poll_interval", defaults.POLL_INTERVAL_S),
]


@pytest.mark.parametrize("command,param,model,field,home", PAIRS, ids=lambda x: getattr(x, "__name__", x))
def test_the_cli_and_the_library_take_a_default_from_its_one_home(
    command: object, param: str, model: type, field: str, home: object
) -> None:
    assert callable(command)
    cli_default = inspect.signature(command).parameters[param].default
    fields = getattr(model, "model_fields", None)
    lib_default = fields[field].default if fields else getattr(model(), field)
    assert cli_default == lib_default == home


def test_provider_settings_and_the_flags_help_state_the_same_defaults() -> None:
    settings = ProviderSettings()
    assert (settings.timeout, settings.max_retries, settings.concurrency, settings.max_answer_chars) == (
        defaults.TIMEOUT_S,
        defaults.MAX_RETRIES,
        defaults.CONCURRENCY,
        defaults.MAX_ANSWER_CHARS,
    )
    out = CliRunner().invoke(app, ["judge", "--help"], env={"COLUMNS": "200"})
    assert out.exit_code == 0
    text = " ".join(out.output.split())
    assert f"[default: {defaults.CONCURRENCY}]" in text and f"[default: {defaults.ROUND_ITEMS}]" in text


def test_no_module_writes_these_defaults_again() -> None:
    """The numbers themselves appear in defaults.py only (a default written twice drifts)."""
    names = r"(round_items|tau|delta|poll_interval|sim_seeds|latency|discordant|units|fresh_units)"
    default = r"(.*Field\(default=[0-9]|.*\s=\s*[0-9][0-9.]*\s*,?\s*(#.*)?$)"
    pattern = re.compile(rf"^\s*{names}\s*:{default}")
    found = [
        f"{path.relative_to(SRC)}:{n}: {line.strip()}"
        for path in SRC.rglob("*.py")
        if path.name != "defaults.py" and path.parts[-2] not in ("bbe", "batch")  # internals, not flags
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and "def " not in line
    ]
    assert not found, found
