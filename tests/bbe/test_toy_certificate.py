"""Issue 42, a certificate is one file: a kind registered here (this module is the whole toy) is
named in `bbe --help`, accepted by `--certificate` and released in bbe.json, with nothing else
edited; once removed it is neither listed nor accepted."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgebench.bbe import certificate_registry as registry
from judgebench.bbe.certificates import Certificate, Evidence
from judgebench.cli import app
from tests.bbe.helpers import write_run

runner = CliRunner()


class Toy(registry.CertificateKind):
    """The range bound doubled: b = 2 sqrt(k) (looser than `range`, so `auto` never picks it)."""

    name = "toy"
    summary = "a test's twice-the-range bound"
    assumptions = "A neighbour changes at most k units in [0, 1]; b = 2 sqrt(k)."

    def build(self, ev: Evidence) -> Certificate | None:
        b = 2 * math.sqrt(ev.k)
        return Certificate(self.name, b, ev.tau / b, 0.0, ev.delta, 0.0, True, ev.tau, ev.d)


@pytest.fixture
def toy() -> Iterator[None]:
    registry.register(Toy())
    try:
        yield
    finally:
        registry.unregister(Toy.name)


def _help() -> str:
    result = runner.invoke(app, ["bbe", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _release(run: Path, certificate: str) -> tuple[int, str]:
    flags = ["--tau", "0.5", "--delta", "0.01", "--run", str(run), "--no-plot", "--certificate", certificate]
    result = runner.invoke(app, ["bbe", *flags])
    return result.exit_code, result.output


def test_a_registered_certificate_is_listed_accepted_and_released(toy: None, tmp_path: Path) -> None:
    assert "toy (a test's twice-the-range bound)" in _help()
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=20)
    code, out = _release(run, "toy")
    assert code == 0, out
    doc = json.loads((run / "bbe.json").read_text())
    assert doc["certificate"] == "toy"
    toy_row = next(r for r in doc["certificates"] if r["name"] == "toy")
    range_row = next(r for r in doc["certificates"] if r["name"] == "range")
    assert toy_row["bound"] == pytest.approx(2 * range_row["bound"])


def test_an_unregistered_certificate_is_neither_listed_nor_accepted(tmp_path: Path) -> None:
    shown = _help()
    assert "toy" not in shown and "exact_ucb" in shown and "markov" in shown
    run = write_run(tmp_path / "run", judges={"j": 0.1}, items=20)
    code, out = _release(run, "toy")
    assert code != 0 and "unknown certificate 'toy'" in " ".join(out.split())
