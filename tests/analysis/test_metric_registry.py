"""The metric registry: every metric declared once, and a new metric costs two files.

The toy metric below is declared and computed here, outside src/: if it reaches the report's
answers section, metrics.json/.csv, report.md and compare's files, no other file had to learn of it.
A second toy (`orig_flip_rate`) brings its unit rows and a readiness gate: it reaches the
item-clustered bootstrap and the item-level interval, the forest plot and the leaderboard table too
(its verdicts: test_metric_gates.py).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgebench import api
from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis.cell_sums import proportion, sum_cells
from judgebench.analysis.findings import MEAN_JUDGE
from judgebench.analysis.metric_registry import (
    Gate,
    MetricInputs,
    MetricSpec,
    in_section,
    register,
    spec_of,
    specs,
    unregister,
)
from judgebench.api.leaderboard import leaderboard_weights
from judgebench.errors import InputError
from judgebench.records import Metric
from judgebench.records.metrics import CIMethod
from judgebench.report import build_sections
from judgebench.report.forest import forest, forest_specs
from judgebench.report.index import MetricIndex
from judgebench.report.markdown_render import table_markdown
from tests.analysis.test_leaderboard import EN, ZH, judgments
from tests.report.conftest import make_judgments

TOY = "orig_tie_rate"
TOY_LABEL = "Orig tie %"
SETTINGS = ReportSettings(bootstrap_samples=0, seed=1)
SRC = Path(__file__).resolve().parents[2] / "src" / "judgebench"


def orig_tie_rate(inputs: MetricInputs) -> pd.DataFrame:
    """The toy metric's computation: ties among the valid pair verdicts of the orig order."""
    p = inputs.units.pairs
    if p.empty:
        return pd.DataFrame()
    orig = (p["order"] == "orig").astype(int)
    rows = p.assign(k=p["tie"].astype(int) * orig, n=p["valid"].astype(int) * orig)
    return proportion(sum_cells(inputs.layout, rows, ["k", "n"]), TOY, "k", "n", inputs.confidence)


@pytest.fixture
def toy() -> Iterator[MetricSpec]:
    """The toy metric's declaration, removed again after the test."""
    spec = register(
        MetricSpec(
            TOY,
            "answers",
            "valid pair judgments in the orig order",
            CIMethod.WILSON,
            TOY_LABEL,
            "answers",
            compare=True,
            compute=orig_tie_rate,
        )
    )
    yield spec
    unregister(TOY)


ORIG_FLIP = "orig_flip_rate"
ORIG_FLIP_LABEL = "Orig flip %"
UNIT_COLUMNS = ["judge", "condition", "item_id", "k", "n"]


def orig_flip_units(inputs: MetricInputs) -> pd.DataFrame:
    """The gated toy's unit rows: per (item, orig order) pair of conditions, a flip (k) among the
    pairs whose two verdicts are valid (n); the swapped order left out."""
    f = inputs.units.flips
    if f.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    orig = (f["order"] == "orig").astype(int)
    return f.assign(k=f["flip"].astype(int) * orig, n=f["both"].astype(int) * orig)[UNIT_COLUMNS]


def orig_flip_spec(gate: Gate = Gate(0.15), *, leaderboard: str | None = ORIG_FLIP_LABEL) -> MetricSpec:
    return MetricSpec(
        ORIG_FLIP,
        "flips",
        "valid (item, orig order) pairs",
        CIMethod.WILSON,
        ORIG_FLIP_LABEL,
        "flips",
        "invariance",
        per="pair",
        gate=gate,
        items="wilson",
        leaderboard=leaderboard,
        units=orig_flip_units,
    )


@pytest.fixture
def gated_toy() -> Iterator[MetricSpec]:
    yield register(orig_flip_spec())
    unregister(ORIG_FLIP)


def _leaderboard_columns() -> list[str]:
    data = judgments(EN, "en") + judgments(ZH, "zh")
    scored = analyze(
        data, settings=SETTINGS, condition_order=["zh"], leaderboard=leaderboard_weights("rewardbench")
    )
    (section,) = [s for s in build_sections(scored) if s.key == "leaderboard"]
    return section.tables[0].columns


def test_a_metric_with_unit_rows_reaches_the_bootstrap_forest_and_leaderboard(gated_toy: MetricSpec) -> None:
    analysis = analyze(
        make_judgments(("local",), ("en", "zh"), per_subset=6, tie_probes=False, seed=3),
        settings=ReportSettings(bootstrap_samples=40, seed=1),
    )
    (rec,) = [
        r for r in analysis.records
        if r.metric == ORIG_FLIP and r.judge == "local" and r.subset == "all" and not r.filtered
    ]  # fmt: skip
    assert rec.condition == "en->zh" and rec.ci_method == CIMethod.WILSON
    # summed from its unit rows: the orig order's share of the flip rate's valid pairs (30 items)
    flips = next(
        r for r in analysis.records
        if r.metric == Metric.FLIP_RATE and r.judge == "local" and r.subset == "all" and not r.filtered
    )  # fmt: skip
    assert rec.n is not None and flips.n is not None and 0 < rec.n <= 30 and rec.n < flips.n <= 2 * 30
    # the item-clustered bootstrap resampled it, and it has an item-level interval (`items`): one
    # unit per item with a valid orig pair
    assert rec.boot_low is not None and rec.boot_high is not None
    assert rec.n_items == rec.n and rec.item_low is not None and rec.item_high is not None

    assert [s.name for s in forest_specs()] == [
        Metric.FLIP_RATE,
        Metric.POSITION_INCONSISTENCY_INCREASE,
        ORIG_FLIP,
    ]
    index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
    fig = forest(index, list(analysis.conditions), analysis.settings)
    assert fig is not None
    titles = [ax.get_title(loc="left") + ax.get_title() for ax in fig.axes]
    assert len(fig.axes) == 3 and "orig flip rate" in titles[2], titles
    assert "limit 15 %" in fig.axes[2].get_xlabel()

    columns = _leaderboard_columns()
    assert columns[-3:] == ["Flip en->c %", "Pos. incons. %", ORIG_FLIP_LABEL]


def test_without_the_declaration_no_forest_panel_or_leaderboard_column() -> None:
    analysis = analyze(
        make_judgments(("local",), ("en", "zh"), per_subset=6, tie_probes=False, seed=3), settings=SETTINGS
    )
    assert not any(r.metric == ORIG_FLIP for r in analysis.records)
    index = MetricIndex(analysis.records, [j.judge for j in analysis.judges])
    fig = forest(index, list(analysis.conditions), analysis.settings)
    assert fig is not None and len(fig.axes) == 2
    assert _leaderboard_columns()[-2:] == ["Flip en->c %", "Pos. incons. %"]


def _write_run(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True)
    judgments = make_judgments(("local",), ("en", "zh"), per_subset=6, tie_probes=False, seed=seed)
    (folder / "judgments.jsonl").write_text("".join(j.model_dump_json() + "\n" for j in judgments))
    return folder


def test_every_metric_name_is_declared_once() -> None:
    for metric in Metric:
        assert spec_of(metric) is not None, metric
    assert spec_of("tie_probe_ja") is not None and spec_of("source:judgebench_score") is not None
    assert spec_of("no_such_metric") is None
    names = [s.name for s in specs()]
    assert len(names) == len(set(names))
    with pytest.raises(InputError, match="declared twice"):
        register(specs()[0])
    with pytest.raises(InputError, match="unknown report section 'nowhere'"):
        MetricSpec("x", "f", "d", None, "X", "nowhere")


def test_declared_intervals_are_the_records_intervals() -> None:
    """A declaration that lies about a record's interval fails here: the records of a full analysis
    (two judges, three conditions, tie-probes) carry the interval their metric declares."""
    analysis = analyze(make_judgments(), settings=ReportSettings(bootstrap_samples=30, seed=1))
    seen = set()
    for record in analysis.records:
        spec = spec_of(record.metric)
        assert spec is not None, record.metric
        if record.judge == MEAN_JUDGE or record.ci_method is None or record.value is None:
            continue
        seen.add(record.metric)
        assert record.ci_method == spec.interval, (record.metric, record.ci_method, spec.interval)
    assert {Metric.STRICT_ACCURACY, Metric.FLIP_RATE, Metric.TIE_PROBE_EN_SHARE} <= seen


def test_a_two_file_metric_reaches_every_output(toy: MetricSpec, tmp_path: Path) -> None:
    run_a, run_b = _write_run(tmp_path / "a", 3), _write_run(tmp_path / "b", 4)

    analysis = api.analyze_run(run_a, SETTINGS)
    toy_records = [r for r in analysis.records if r.metric == TOY and r.subset == "all" and not r.filtered]
    assert {r.condition for r in toy_records} == {"en", "zh"}
    en = next(r for r in toy_records if r.condition == "en")
    assert en.n == 6 * 5 and en.k is not None and en.ci_method == CIMethod.WILSON  # 6 items x 5 subsets

    (answers,) = [s for s in build_sections(analysis) if s.key == "answers"]
    assert TOY_LABEL in answers.tables[0].columns
    assert TOY_LABEL in table_markdown(answers.tables[0])

    result = api.report(run_a, api.ReportRequest(settings=SETTINGS, html=False))
    assert any(r["metric"] == TOY for r in json.loads((run_a / "metrics.json").read_text()))
    csv = pd.read_csv(run_a / "metrics.csv")
    assert (csv["metric"] == TOY).sum() == sum(r.metric == TOY for r in result.analysis.records) > 0
    markdown = (run_a / "report.md").read_text()
    assert f" {TOY_LABEL} |" in markdown  # a column of the answers table
    assert TOY.replace("_", r"\_") in markdown  # the definitions table names it, with its denominator
    assert "valid pair judgments in the orig order" in markdown

    compared = api.compare_runs(run_a, run_b, api.CompareRequest(out=tmp_path / "cmp", metrics=True))
    toy_rows = [m for m in compared.doc.metrics if m.metric == TOY]
    assert {m.condition for m in toy_rows} == {"en", "zh"}
    assert all(m.value_a is not None and m.value_b is not None for m in toy_rows)
    doc = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert any(m["metric"] == TOY for m in doc["metrics"])
    assert TOY_LABEL in (tmp_path / "cmp" / "compare.md").read_text()


def test_without_the_declaration_the_toy_metric_is_nowhere(tmp_path: Path) -> None:
    """The other side: the same run without the toy's declaration has no such record or column."""
    analysis = api.analyze_run(_write_run(tmp_path / "a", 3), SETTINGS)
    assert not any(r.metric == TOY for r in analysis.records)
    assert TOY not in [s.name for s in in_section("answers")]
    (answers,) = [s for s in build_sections(analysis) if s.key == "answers"]
    assert TOY_LABEL not in answers.tables[0].columns


def _model_copy_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "model_copy"
        and "analysis" in ast.unparse(node.func.value).lower()
    ]


def test_no_api_module_patches_a_finished_analysis() -> None:
    """The analysis returns the finished Analysis: no api module calls model_copy on one."""
    patched = {
        str(path.relative_to(SRC)): lines
        for path in sorted((SRC / "api").glob("*.py"))
        if (lines := _model_copy_calls(path))
    }
    assert patched == {}


def test_the_patch_check_catches_a_patch(tmp_path: Path) -> None:
    planted = tmp_path / "report.py"
    planted.write_text("def f(analysis):\n    return analysis.model_copy(update={'records': []})\n")
    assert _model_copy_calls(planted) == [2]
