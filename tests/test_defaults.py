"""Each flag's default has one home (issue 25): `judgebench.config.defaults`. The request models and the
CLI read it from there, so the CLI's default and the library's agree, and no other module writes
the number again."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from judgebench import api
from judgebench.analysis.findings import ReportSettings
from judgebench.cli import app, bbe_cmd, judge_cmd, plan_cmd, run_cmd, translate_cmd
from judgebench.config import defaults
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


# Each number in defaults.py and the names a parameter, field or keyword holding it goes by.
NAMES: dict[str, tuple[str, ...]] = {
    "ROUND_ITEMS": ("round_items",),
    "TAU": ("tau",),
    "DELTA": ("delta",),
    "PERTURB_UNITS": ("units", "perturb_units", "fresh_units"),
    "TIMEOUT_S": ("timeout", "timeout_s"),
    "MAX_RETRIES": ("max_retries",),
    "CONCURRENCY": ("concurrency",),
    "MAX_ANSWER_CHARS": ("max_answer_chars",),
    "POLL_INTERVAL_S": ("poll_interval", "poll_interval_s"),
    "PLAN_POWER": ("power",),
    "PLAN_ALPHA": ("alpha",),
    "PLAN_DISCORDANT": ("discordant",),
    "PLAN_LATENCY_S": ("latency", "latency_s"),
    "PLAN_SIM_SEEDS": ("sim_seeds",),
    "COMPARE_GATE_FLIP_RATE": ("gate_flip_rate", "gate"),
    # 0.95 is the conventional level of several settings, each its own home (ReportSettings, compare,
    # the human-label analysis) and of the statistical helpers: compare's is scanned by its own name
    "COMPARE_CONFIDENCE": ("compare_confidence",),
}
# The same number written on purpose under a name plan's flags also use: the report's power is its
# own setting (ReportSettings, the report flags' home), and the statistical helpers' conventional
# levels are keywords every caller passes.
ALLOWED = {
    ("analysis/findings.py", "power"),
    ("analysis/stats.py", "alpha"),
    ("analysis/stats.py", "power"),
    ("analysis/sequential.py", "alpha"),
}


# the selftest writes its own synthetic zh and ls variants: its conditions are its own, not the flag's
OWN_CONDITIONS = {"api/selftest.py"}


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _numbers() -> dict[str, float]:
    return {
        name: value
        for name, value in vars(defaults).items()
        if name.isupper() and isinstance(value, int | float) and not isinstance(value, bool)
    }


def _literal(node: ast.expr | None) -> float | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    return None


def _holders(tree: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) for each parameter default, annotated class or module field (with its
    `Field(default=...)`) and keyword argument in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            positional = args.posonlyargs + args.args
            yield from zip(
                [a.arg for a in positional[len(positional) - len(args.defaults) :]],
                args.defaults,
                strict=True,
            )
            yield from (
                (a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
            )
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Call):
                value = next((k.value for k in value.keywords if k.arg == "default"), value)
            yield node.target.id, value
        elif isinstance(node, ast.Call):
            yield from ((k.arg, k.value) for k in node.keywords if k.arg)


def restated_defaults(source: str, where: str) -> list[str]:
    """Every place in `source` that writes one of defaults.py's numbers again: as the default or
    keyword value of a name it goes by, or after its flag in a string (`"--tau 0.5"`)."""
    numbers = _numbers()
    by_name = {alias: numbers[home] for home, aliases in NAMES.items() for alias in aliases}
    tree = ast.parse(source)
    found = [
        f"{where}:{value.lineno}: {name} = {_literal(value):g}"
        for name, value in _holders(tree)
        if name in by_name and _literal(value) == by_name[name] and (where, name) not in ALLOWED
    ]
    conditions = defaults.CONDITIONS.split(",")
    for node in ast.walk(tree):
        written = isinstance(node, ast.List | ast.Tuple) and [_text(e) for e in node.elts] == conditions
        if written and where not in OWN_CONDITIONS:
            found.append(f"{where}:{node.lineno}: the default conditions {conditions} written again")
        if (
            isinstance(node, ast.Constant)
            and node.value == defaults.CONDITIONS
            and where not in OWN_CONDITIONS
        ):
            found.append(
                f"{where}:{node.lineno}: the default conditions '{defaults.CONDITIONS}' written again"
            )
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for flag, number in re.findall(r"--([a-z][a-z-]*)[ =]([0-9][0-9.]*)", node.value):
                if by_name.get(flag.replace("-", "_")) == float(number):
                    found.append(f"{where}:{node.lineno}: '--{flag} {number}' in a string")
    return found


def test_every_number_in_defaults_has_the_names_it_goes_by() -> None:
    assert set(_numbers()) == set(NAMES)


def test_no_module_writes_these_defaults_again() -> None:
    """The numbers themselves appear in defaults.py only (a default written twice drifts): every
    module of the package, bbe/ and batch/ included."""
    found = [
        problem
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "defaults.py"
        for problem in restated_defaults(path.read_text(encoding="utf-8"), path.relative_to(SRC).as_posix())
    ]
    assert not found, found


@pytest.mark.parametrize(
    "planted",
    [
        "def run_batch(*, poll_interval: float = 30.0) -> None: ...",  # main's batch/runner.py before
        "def f(items: int, round_items: int = 20) -> None: ...",
        "class R(BaseModel):\n    tau: float = Field(default=0.5, gt=0)",
        "class O:\n    poll_interval: float = 30.0",
        "params = BBEParams(tau=0.5, delta=defaults.DELTA)",
        'command = "judgebench bbe --tau 0.5 --delta 0.01 --run RUN"',  # main's report/bbe_section.py before
        'names = names or ["zh", "ls"]',  # main's conditions.select_conditions before
        'conditions: str = "zh,ls"',
    ],
)
def test_a_restated_default_is_found(planted: str) -> None:
    assert restated_defaults(planted, "planted.py")


@pytest.mark.parametrize(
    "clean",
    [
        "def run_batch(*, poll_interval: float = defaults.POLL_INTERVAL_S) -> None: ...",
        "params = BBEParams(tau=defaults.TAU, delta=defaults.DELTA)",
        'command = f"judgebench bbe --tau {defaults.TAU:g} --run RUN"',
        "client = OpenAI(max_retries=0, timeout=60.0)",  # another knob's own number, not the default
        "def f(tau: float = 0.25) -> None: ...",
        'names = names or defaults.CONDITIONS.split(",")',
        'for cond in ("zh", "ja"): ...',
    ],
)
def test_reading_defaults_or_another_number_is_not_a_restatement(clean: str) -> None:
    assert restated_defaults(clean, "clean.py") == []


# `judgebench report`'s flags leave their value None (ReportSettings' default applies) and show it
# in their help: each shown number is checked against ReportSettings, their one home.
REPORT_FLAGS = {
    "--bootstrap": "bootstrap_samples",
    "--seed": "seed",
    "--confidence": "confidence",
    "--max-flip-rate": "max_flip_rate",
    "--max-position-increase": "max_position_increase",
    "--min-items": "min_items",
    "--min-effect": "min_detectable_effect",
    "--max-position-inconsistency": "max_position_inconsistency",
    "--max-invalid-rate": "max_invalid_rate",
    "--max-answer-share": "max_answer_share",
    "--chance": "chance",
}


def test_the_report_help_shows_report_settings_own_defaults() -> None:
    params = {p.opts[0]: p for p in typer.main.get_command(app).commands["report"].params}  # type: ignore[attr-defined]
    shown = {}
    for flag, field in REPORT_FLAGS.items():
        match = re.search(r"\[default: ([0-9.]+)\]", params[flag].help or "")
        assert match, f"{flag} does not show its default"
        shown[flag] = float(match.group(1))
        assert shown[flag] == ReportSettings.model_fields[field].default, (flag, field)
    assert len(shown) == len(REPORT_FLAGS)
