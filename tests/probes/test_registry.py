"""Probes as config files: the built-ins load, a bad file is an error naming file and key, and a probe
added from a config file alone is judged like any condition."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from judgebench import api
from judgebench.api.report import analyze_run
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError, InputError
from judgebench.probes.probe_registry import load_probes, select_probes
from judgebench.records import Judgment, Variant
from judgebench.store.run_folder import last_per_key, read_jsonl


def test_the_built_in_probes() -> None:
    probes = load_probes()
    assert {"length", "format", "template"} <= set(probes)
    assert probes["template"].instances() == ["template-1", "template-2", "template-3"]
    assert probes["length"].instances() == ["length"]
    assert not any(p.needs_model for p in probes.values())
    assert [p.name for p in select_probes("format,length")] == ["format", "length"]
    assert set(p.name for p in select_probes("all")) == set(probes)
    with pytest.raises(ConfigError, match="unknown probe 'nope'"):
        select_probes("length,nope")


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            'name = "x"\n[[steps]]\ntransform = "shout"\nfields = ["outputs"]\n',
            "steps[0]",
            "unknown transform",
        ),
        ('name = "x"\n[[steps]]\ntransform = "pad"\n', "steps[0]", "needs `fields`"),
        (
            'name = "x"\n[[steps]]\ntransform = "pad"\nfields = ["answer"]\n',
            "steps[0].fields[0]",
            "Input should be",
        ),
        ('name = "X y"\n[[steps]]\ntransform = "terse"\nfields = ["chosen"]\n', None, "bad probe name"),
        (
            'name = "x"\nneeds_model = true\n[[steps]]\ntransform = "terse"\nfields = ["chosen"]\n',
            None,
            "make no model call",
        ),
        (
            'name = "x"\n[[steps]]\ntransform = "regex"\nfields = ["outputs"]\nparams = {pattern = "("}\n',
            "steps[0]",
            "bad pattern",
        ),
        ('name = "x"\n[[steps]]\ntransform = "template"\n', "steps[0]", "params.templates"),
        ('name = "x"\nsteps = [\n', None, "not valid TOML"),
    ],
)
def test_a_bad_probe_file_names_file_and_key(
    tmp_path: Path, body: str, field: str | None, message: str
) -> None:
    (tmp_path / "bad.toml").write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        load_probes(tmp_path)
    assert info.value.path == str(tmp_path / "bad.toml")
    assert getattr(info.value, "field", None) == field


def test_a_name_declared_twice_is_an_error(tmp_path: Path) -> None:
    body = 'name = "x"\n[[steps]]\ntransform = "terse"\nfields = ["chosen"]\n'
    (tmp_path / "a.toml").write_text(body)
    (tmp_path / "b.toml").write_text(body)
    with pytest.raises(InputError, match="declared twice"):
        load_probes(tmp_path)


TOY = """
name = "hedge"
description = "a hedging sentence put before the rejected output"
languages = ["en"]
[[steps]]
transform = "prepend"
fields = ["rejected"]
[steps.params]
text = { en = "I may be wrong about this." }
"""


def test_a_probe_from_a_config_file_alone_is_judged_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(configs_dir(), configs)
    (configs / "probes" / "hedge.toml").write_text(TOY, encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    run = tmp_path / "run"
    result = api.judge(run, api.JudgeRequest(models=["sim:unbiased"], dataset="sample", probes="hedge"))
    assert result.outcomes["sim:unbiased"].invalid == 0
    variants = [v for v in read_jsonl(run / "variants.jsonl", Variant) if v.condition == "hedge"]
    assert variants and all(v.source == "probe:hedge" for v in variants)
    assert all("I may be wrong about this." in (v.output_1 + v.output_2) for v in variants)
    judged = last_per_key(read_jsonl(run / "judgments.jsonl", Judgment), key=lambda j: j.call_key())
    hedge = [j for j in judged.values() if j.condition == "hedge"]
    assert len(hedge) == 2 * len(variants)
    records = {(r.metric, r.condition) for r in analyze_run(run).records if r.subset == "all"}
    assert ("flip_rate", "en->hedge") in records
    # the same command again asks for nothing: the probe's variants and calls are kept
    again = api.judge(run, api.JudgeRequest(models=["sim:unbiased"], dataset="sample", probes="hedge"))
    assert again.outcomes["sim:unbiased"].requested == 0
