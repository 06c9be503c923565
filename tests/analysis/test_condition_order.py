"""Which way a pair of target conditions is named (zh->ls or ls->zh): analyze() reads no config, so
the order is the caller's, else the default conditions' (never the order judgments came in); a run
folder gives the order it recorded, or the conditions config's when it has no translate stage."""

from __future__ import annotations

from pathlib import Path

from judgebench.analysis import ReportSettings, analyze
from judgebench.api import analyze_run
from judgebench.records import Judgment
from judgebench.store.run_folder import JUDGMENTS, JsonlAppender, RunDir
from tests.analysis.builders import pair

NO_BOOTSTRAP = ReportSettings(bootstrap_samples=0)


def _judgments(conditions: tuple[str, ...]) -> list[Judgment]:
    return [
        pair("J", f"Natural/{i}", c, o, "1", 1)
        for c in conditions
        for i in range(4)
        for o in ("orig", "swap")
    ]


def _pairs(judgments: list[Judgment], condition_order: list[str] | None = None) -> set[str]:
    analysis = analyze(judgments, settings=NO_BOOTSTRAP, condition_order=condition_order)
    return {r.condition for r in analysis.records if r.metric == "flip_rate"}


def test_without_an_order_the_default_order_names_the_pairs_whatever_the_line_order() -> None:
    assert _pairs(_judgments(("en", "zh", "ls"))) == {"en->zh", "en->ls", "zh->ls"}
    assert _pairs(_judgments(("ls", "en", "zh"))) == {"en->zh", "en->ls", "zh->ls"}
    # a target the defaults do not name comes after theirs, by name
    assert _pairs(_judgments(("ja", "en", "zh"))) == {"en->zh", "en->ja", "zh->ja"}


def test_a_given_order_wins_over_the_judgments_order() -> None:
    assert _pairs(_judgments(("ls", "en", "zh")), condition_order=["zh", "ls"]) == {
        "en->zh",
        "en->ls",
        "zh->ls",
    }


def test_a_run_without_a_translate_stage_takes_the_config_order(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.init()
    with JsonlAppender(run.file(JUDGMENTS)) as out:
        for judgment in _judgments(("ls", "en", "zh")):  # written ls first: the config says zh, ls
            out.append(judgment)
    analysis = analyze_run(run, NO_BOOTSTRAP)
    assert analysis.conditions == ["en", "zh", "ls"]
    assert {r.condition for r in analysis.records if r.metric == "flip_rate"} == {
        "en->zh",
        "en->ls",
        "zh->ls",
    }
