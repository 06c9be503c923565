"""Today's fast analysis paths against their plainer references (tests/analysis/reference.py): the
long-form cell sums and the whole-matrix bootstrap. Every metric must come out the same: bit for bit,
except the ECE bootstrap interval, whose float gaps BLAS may sum in another order per block of
replicates (within 1e-12)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judgebench.analysis import (
    accuracy,
    bootstrap,
    calibration,
    comparisons,
    flips,
    position,
    tie_probes,
)
from judgebench.analysis import cell_sums as cells
from judgebench.analysis import record_pipeline as pipeline
from judgebench.analysis.bootstrap import Resampler, resample_weights
from judgebench.analysis.frame import Layout
from judgebench.analysis.record_pipeline import analyze_table
from judgebench.records import Metric
from judgebench.store.judgment_table import read_judgment_table, read_plan_table
from tests.analysis import reference
from tests.analysis.test_columnar import SETTINGS, _write_run

FLAGGED = {"Natural/3", "Adversarial/GPTInst/5", "Adversarial/Neighbor/0"}


def _records(judgments: Path, planned: Path) -> list[dict[str, Any]]:
    analysis = analyze_table(
        read_judgment_table(judgments).analysis_frame(),
        settings=SETTINGS,
        planned=read_plan_table(planned),
        flagged_items=FLAGGED,
        condition_order=["zh", "ls"],
    )
    return [r.model_dump() for r in analysis.records]


def _differences(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(new) | set(old)):
        a, b = new.get(key), old.get(key)
        if isinstance(a, float) and isinstance(b, float):
            if math.isnan(a) and math.isnan(b):
                continue
            # one summation path: stated confidences sum to rounding, counts exactly
            if math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12):
                continue
        elif a == b and type(a) is type(b):
            continue
        out.append(f"{new['judge']} {new['metric']} {new['condition']} {new['subset']} {key}: {a!r} != {b!r}")
    return out


def test_every_metric_equals_the_reference_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judgments, planned = _write_run(tmp_path)
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 3000)  # many blocks of replicates per item set
    new = _records(judgments, planned)
    for module in (accuracy, flips, position, tie_probes, comparisons, calibration):
        monkeypatch.setattr(module, "sum_cells", reference.sum_cells)

    def whole_draws(layout: Layout, units: Any, settings: Any, beside: Any, own: Any = ()) -> Any:
        return beside.submit(reference.bootstrap_intervals, layout, units, settings)

    monkeypatch.setattr(pipeline, "start_bootstrap", whole_draws)
    monkeypatch.setattr(pipeline, "to_records", reference.to_records)
    old = _records(judgments, planned)
    assert len(new) == len(old) > 1000
    assert {r["metric"] for r in new} >= {Metric.ECE, Metric.FLIP_RATE_DIFF, Metric.MEAN_CONFIDENCE}
    assert [(r["judge"], r["metric"], r["condition"], r["subset"], r["filtered"]) for r in new] == [
        (r["judge"], r["metric"], r["condition"], r["subset"], r["filtered"]) for r in old
    ]
    wrong = [d for a, b in zip(new, old, strict=True) for d in _differences(a, b)]
    assert not wrong, wrong[:5]
    booted = [r for r in new if r.get("boot_low") is not None or r.get("ci_method") == "bootstrap"]
    assert len(booted) > 100  # the comparison covered the bootstrap


@pytest.mark.parametrize(("n_items", "samples", "chunk"), [(1, 7, 5), (13, 300, 40), (997, 64, 5000)])
def test_blocks_of_replicates_are_the_whole_draw(
    n_items: int, samples: int, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", chunk)
    whole = reference.resample_weights(n_items, samples, 5, "Natural|True")
    np.testing.assert_array_equal(resample_weights(n_items, samples, 5, "Natural|True"), whole)
    rng = np.random.default_rng(n_items)
    counts = rng.integers(-3, 4, size=(n_items, 6)).astype(float)
    counts[:, 2] = 0.0  # an empty column: left out of the product, exactly 0
    halves = counts / 2.0
    floats = rng.normal(size=(n_items, 4))
    floats[:, 1] = 0.0
    big = np.full((n_items, 1), 2.0**23)  # past float32's exact range: must take float64
    got = Resampler(n_items, samples, 5, "Natural|True").products([counts, halves, floats, big])
    np.testing.assert_array_equal(got[0], whole @ counts)
    np.testing.assert_array_equal(got[1], whole @ halves)
    np.testing.assert_allclose(got[2], whole @ floats, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got[3], whole @ big)


def test_a_different_seed_or_stream_draws_differently() -> None:
    w = resample_weights(40, 50, 1, "all|False")
    assert not np.array_equal(w, resample_weights(40, 50, 2, "all|False"))
    assert not np.array_equal(w, resample_weights(40, 50, 1, "all|True"))


def test_cell_sums_equal_the_long_form_on_random_rows() -> None:
    rng = np.random.default_rng(3)
    subsets = ["Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Other"]
    items = [f"{subsets[i % 4]}/{i}" for i in range(60)]
    df = pd.DataFrame({"item_id": items, "subset": [i.rsplit("/", 1)[0] for i in items]})
    n = 3000
    rows = pd.DataFrame(
        {
            "judge": rng.choice(["b", "a", "c"], n),
            "item_id": rng.choice(items[::-1], n),
            "condition": rng.choice(["zh", "en", "ls"], n),
            "bin": rng.integers(0, 10, n),
            "hits": rng.integers(0, 3, n),
            "half": rng.integers(0, 5, n) * 0.5,
            "conf": rng.random(n),
            "gap": rng.normal(size=n) * 1e-3,
        }
    )
    cols = ["hits", "half", "conf", "gap"]
    every_other = {i for i in items if i.startswith("Other/")}  # a group with no row in the filtered table
    for flagged in ({items[2], items[7], items[11]}, every_other):
        layout = Layout(df, flagged)
        for extra in ((), ("bin",)):
            new = cells.sum_cells(layout, rows, cols, extra)
            old = reference.sum_cells(layout, rows, cols, extra)
            assert len(new) > 90
            exact = [c for c in new.columns if c not in ("conf", "gap")]  # counts and halves: exactly
            pd.testing.assert_frame_equal(new[exact], old[exact], check_exact=True, check_dtype=False)
            pd.testing.assert_frame_equal(new, old, check_exact=False, rtol=1e-12, atol=1e-12)
            assert new["hits"].dtype == old["hits"].dtype
