"""A declared readiness gate takes part in the verdict, and a package adds a metric through the
entry-point group `judgebench.metrics` without editing judgebench.

The judge below is clean (419 items, never flips, always right: its verdict passes). Planted toy
gates on each side: one it clears leaves the verdict passing, one it does not makes it fail, in
the part (baseline or invariance) the toy is declared for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgebench.analysis import ReportSettings, analyze
from judgebench.analysis import metric_registry as registry
from judgebench.analysis.findings import ReadinessVerdict
from judgebench.analysis.metric_registry import Gate, MetricInputs, MetricSpec, register, unregister
from judgebench.errors import InputError, JudgebenchError
from judgebench.records.metrics import CIMethod
from tests.analysis.test_metric_registry import UNIT_COLUMNS, orig_flip_spec
from tests.analysis.test_readiness import judge_run
from tests.fake_distribution import fake_distribution

SETTINGS = ReportSettings(bootstrap_samples=0, seed=1)
ORIG_RIGHT = "orig_right_rate"


def orig_right_units(inputs: MetricInputs) -> pd.DataFrame:
    """A baseline toy: right answers among the labelled pair judgments of the orig order."""
    p = inputs.units.pairs
    orig = (p["order"] == "orig").astype(int)
    return p.assign(k=p["correct"].astype(int) * orig, n=p["acc_n"].astype(int) * orig)[UNIT_COLUMNS]


def orig_right_spec(gate: Gate) -> MetricSpec:
    return MetricSpec(
        ORIG_RIGHT, "accuracy", "labelled orig-order judgments", CIMethod.WILSON, "Orig right %",
        readiness="baseline", gate=gate, items="wilson", units=orig_right_units,
    )  # fmt: skip


@pytest.fixture(scope="module")
def clean() -> list[object]:
    return list(judge_run("clean", 419, 0.0))


def _verdict(judgments: list[object]) -> ReadinessVerdict:
    (verdict,) = analyze(judgments, settings=SETTINGS).readiness  # type: ignore[arg-type]
    return verdict


@pytest.fixture
def declared() -> Iterator[list[str]]:
    """The names a test registers, removed again after it."""
    names: list[str] = []
    yield names
    for name in names:
        unregister(name)


def test_the_clean_judge_passes_without_a_toy(clean: list[object]) -> None:
    verdict = _verdict(clean)
    assert verdict.status == "pass" and not any("orig" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    ("spec", "part", "status", "said"),
    [
        # the clean judge never flips: 0% of orig pairs, at or below 15% passes, above 50% fails
        (orig_flip_spec(Gate(0.15)), "invariance", "pass", "orig flip rate en->zh 0.0%"),
        (orig_flip_spec(Gate(0.5, at_most=False)), "invariance", "fail", "is not above the limit 50.0%"),
        # it is always right in en: 100%, above chance passes; at or below 90% fails
        (orig_right_spec(Gate("chance", at_most=False)), "baseline", "pass", "orig right rate en 100.0%"),
        (orig_right_spec(Gate(0.9)), "baseline", "fail", "is above the limit 90.0%"),
    ],
)
def test_a_declared_gate_decides_its_part_of_the_verdict(
    clean: list[object], declared: list[str], spec: MetricSpec, part: str, status: str, said: str
) -> None:
    declared.append(register(spec).name)
    verdict = _verdict(clean)
    assert verdict.status == status and getattr(verdict, part) == status
    other = "baseline" if part == "invariance" else "invariance"
    assert getattr(verdict, other) == "pass"  # the built-in checks are untouched
    (reason,) = [r for r in verdict.reasons if r.startswith(spec.prose)]
    assert said in reason and "item-level (Wilson on 419 items)" in reason, reason
    if status == "fail":
        assert verdict.why[part] == reason  # what `judgebench run` prints beside FAIL


def test_a_gate_that_cannot_be_read_leaves_the_verdict_inconclusive(
    clean: list[object], declared: list[str]
) -> None:
    """A gated metric without a record (its computation gives no row) cannot pass a judge."""
    empty = MetricSpec(
        "never_measured", "flips", "nothing", CIMethod.WILSON, "Never %", readiness="invariance",
        per="pair", gate=Gate(0.15), units=lambda _: pd.DataFrame(columns=UNIT_COLUMNS),
    )  # fmt: skip
    declared.append(register(empty).name)
    verdict = _verdict(clean)
    assert verdict.status == "inconclusive" and verdict.invariance == "inconclusive"
    assert any("never measured en->zh unknown" in r for r in verdict.reasons)


def test_a_gate_is_declared_with_a_role_and_a_known_setting() -> None:
    with pytest.raises(InputError, match="needs a readiness role"):
        MetricSpec("x", "f", "d", None, "X", gate=Gate(0.1))
    with pytest.raises(InputError, match="'max_nothing' is not a report setting"):
        Gate("max_nothing")
    assert Gate("max_flip_rate").threshold(ReportSettings(max_flip_rate=0.3)) == 0.3


PLUGIN_MODULE = '''"""A package's metric: one module, an entry point of judgebench.metrics."""
from judgebench.analysis.metric_registry import Gate, MetricSpec
from judgebench.records.metrics import CIMethod

COLUMNS = ["judge", "condition", "item_id", "k", "n"]


def _units(inputs):
    f = inputs.units.flips
    orig = (f["order"] == "orig").astype(int)
    return f.assign(k=f["flip"].astype(int) * orig, n=f["both"].astype(int) * orig)[COLUMNS]


SPEC = MetricSpec(
    "plugin_flip_rate", "flips", "valid orig pairs", CIMethod.WILSON, "Plugin flip %", "flips",
    "invariance", per="pair", gate=Gate(0.5, at_most=False), units=_units,
)
CLASH = MetricSpec("flip_rate", "flips", "d", CIMethod.WILSON, "Flip %")
NOT_A_SPEC = 42
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A fake installed distribution `toymetric` declaring one entry point (set by `install`)."""

    def install(target: str) -> None:
        (tmp_path / "toymetric_plugin.py").write_text(PLUGIN_MODULE, encoding="utf-8")
        fake_distribution(tmp_path, "toymetric", registry.PLUGIN_GROUP, f"toy = {target}")
        monkeypatch.syspath_prepend(str(tmp_path))
        registry._plugins.cache_clear()

    yield install
    monkeypatch.undo()
    registry._plugins.cache_clear()


def test_a_package_adds_a_metric_through_an_entry_point(
    clean: list[object], plugin: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No edit of judgebench: the plugin's metric is computed, shown in its section and its gate
    fails the clean judge; without the distribution it is nowhere and the judge passes."""
    plugin("toymetric_plugin:SPEC")  # type: ignore[operator]
    assert registry.spec_of("plugin_flip_rate") is not None
    analysis = analyze(clean, settings=SETTINGS)  # type: ignore[arg-type]
    assert any(r.metric == "plugin_flip_rate" for r in analysis.records)
    (verdict,) = analysis.readiness
    assert verdict.status == "fail" and verdict.why["invariance"].startswith("plugin flip rate en->zh 0.0%")
    assert "plugin_flip_rate" in [s.name for s in registry.in_section("flips")]

    monkeypatch.undo()  # the distribution uninstalled
    registry._plugins.cache_clear()
    assert registry.spec_of("plugin_flip_rate") is None
    assert _verdict(clean).status == "pass"


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("toymetric_plugin:NOT_A_SPEC", r"entry point toy = toymetric_plugin:NOT_A_SPEC .* not a MetricSpec"),
        (
            "toymetric_plugin:CLASH",
            r"entry point toy = toymetric_plugin:CLASH .* 'flip_rate' is declared twice",
        ),
    ],
)
def test_a_plugin_that_is_no_metric_or_clashes_is_named(plugin: object, target: str, error: str) -> None:
    plugin(target)  # type: ignore[operator]
    with pytest.raises(JudgebenchError, match=error):
        registry.specs()


@pytest.mark.parametrize(
    ("min_items", "said"),
    [
        # 12 items, zero flips: the item-level interval's upper bound is below 50%, but 12 items are
        # fewer than a pass needs by default, so the toy's check stays open ...
        (20, "is not clearly within the limit 50.0%; only 12 items, fewer than the 20 a pass needs"),
        # ... and passes where the user asks for 12 items at least
        (12, "is within the limit 50.0%"),
    ],
)
def test_a_declared_gate_on_a_tiny_slice_cannot_pass(declared: list[str], min_items: int, said: str) -> None:
    declared.append(register(orig_flip_spec(Gate(0.5))).name)
    settings = SETTINGS.model_copy(update={"min_items": min_items})
    (verdict,) = analyze(judge_run("clean", 12, 0.0), settings=settings).readiness
    (reason,) = [r for r in verdict.reasons if r.startswith("orig flip rate")]
    assert "0.0%" in reason and reason.endswith(said), reason
