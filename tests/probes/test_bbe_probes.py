"""`bbe --probes`: the A-BB release calibrated on a chosen set of probes besides the languages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api.probing import probe_neighbours
from judgebench.errors import ConfigError
from judgebench.records.manifest import ProbeEntry

RECORDED = {
    "length": ProbeEntry(probe="length", base="en"),
    "zh+length": ProbeEntry(probe="length", base="zh"),
    "template-1": ProbeEntry(probe="template", base="en"),
    "template-2": ProbeEntry(probe="template", base="en"),
}
AVAILABLE = {"zh", "swap", "length", "zh+length", "template-1", "template-2"}


def test_the_neighbour_kinds_a_probe_set_chooses() -> None:
    # no probes in the run: as before (every kind)
    assert probe_neighbours({}, {"zh", "swap"}, None, None) is None
    # probes in the run, none asked for: the languages and the swap only
    assert probe_neighbours(RECORDED, AVAILABLE, None, None) == ["swap", "zh"]
    assert probe_neighbours(RECORDED, AVAILABLE, None, ["length"]) == ["swap", "zh", "length", "zh+length"]
    assert probe_neighbours(RECORDED, AVAILABLE, ["zh"], ["template"]) == ["zh", "template-1", "template-2"]
    assert set(probe_neighbours(RECORDED, AVAILABLE, None, ["all"]) or []) == AVAILABLE
    with pytest.raises(ConfigError, match="not judged with probe 'format'; it holds: length, template"):
        probe_neighbours(RECORDED, AVAILABLE, None, ["format"])


def _items(path: Path, n: int = 60) -> Path:
    rows = [
        {"id": f"Natural/{i}", "subset": "Natural", "instruction": f"Question {i}?",
         "output_1": f"Answer {i} is {i}.", "output_2": f"Answer {i} is {i + 1}.", "label": 1}
        for i in range(n)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_length_biased_judge_is_bounded_wider_when_calibrated_on_length(tmp_path: Path) -> None:
    run = tmp_path / "run"
    data = _items(tmp_path / "items.jsonl")
    api.judge(run, api.JudgeRequest(models=["sim:probe-biased"], dataset=str(data), probes="length,format"))
    params = api.BBEParams(tau=0.5, delta=0.01)

    def sensitivity(probes: list[str] | None) -> tuple[float, object]:
        out = tmp_path / f"bbe-{probes}.json"
        api.bbe(api.BBERequest(params=params, run=run, probes=probes, out=out, plot=False))
        doc = json.loads(out.read_text(encoding="utf-8"))
        return float(doc["calibrations"][0]["sensitivity"]), doc["source"]["neighbours"]

    swap_only, kinds = sensitivity(None)
    assert kinds == ["swap"]  # format made no variant (no Markdown): only length was judged
    with_length, kinds = sensitivity(["length"])
    assert kinds == ["swap", "length"]
    assert with_length > swap_only  # the padded answers move this judge's scores
