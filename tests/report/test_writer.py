"""write_report: every output file, metrics.json/csv faithful to the analysis, a self-contained HTML."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from judgebench.analysis import Analysis, analyze
from judgebench.analysis.length_artefact import Lengths, output_lengths
from judgebench.cli.render_report import print_sections
from judgebench.records import MetricRecord
from judgebench.records.condition_specs import ProbeOrigin
from judgebench.report import build_sections, write_report
from judgebench.report.plots import PLOT_TITLES
from judgebench.report.rows import metrics_json
from judgebench.store.run_folder import RunDir
from tests.report.conftest import SETTINGS, SUBSETS, make_judgments

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _sections(analysis: Analysis) -> list[str]:
    return [s.key for s in build_sections(analysis)]


@pytest.fixture(scope="module")
def full_analysis(flagged: list[str]) -> Analysis:
    """conftest's full two-judge run plus the length probe on en and on zh, so that every section and
    figure (the probes' included) has data."""
    conditions = ("en", "zh", "ls", "length", "zh+length")
    probes = {"length": ProbeOrigin("length", "en"), "zh+length": ProbeOrigin("length", "zh")}
    return analyze(
        make_judgments(conditions=conditions),
        flagged_items=flagged,
        settings=SETTINGS,
        probes=probes,
        lengths=_lengths(conditions),
    )


def _lengths(conditions: tuple[str, ...]) -> Lengths:
    """Outputs of every item in every condition (so the length section has data): words in en and
    ls, Chinese characters in zh; the length probes pad the rejected output."""
    texts = []
    for subset in SUBSETS:
        for i in range(8):
            label = 1 + (i % 2)
            for cond in conditions:
                unit = "好" if cond.startswith("zh") else "word "
                one, two = unit * (3 + i), unit * (2 + (3 * i) % 7)
                if cond.endswith("length"):
                    one, two = (one, two + " pad" * 20) if label == 1 else (one + " pad" * 20, two)
                texts.append((f"{subset}/{i}", cond, one, two))
    return Lengths(output_lengths(texts))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, full_analysis: Analysis) -> tuple[Path, str]:
    run = tmp_path_factory.mktemp("run")
    console = Console(record=True, width=220)
    paths = write_report(RunDir(run), full_analysis)
    print_sections(console, paths.sections)  # the terminal summary, as `judgebench report` prints it
    return run, console.export_text()


def test_writer_produces_every_file(written: tuple[Path, str]) -> None:
    run, _ = written
    for name in ("metrics.json", "metrics.csv", "report.md", "report.html"):
        assert (run / name).stat().st_size > 0, name
    for key in PLOT_TITLES:
        png = run / "plots" / f"{key}.png"
        assert png.read_bytes().startswith(PNG_MAGIC), key
    md = (run / "report.md").read_text(encoding="utf-8")
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert sorted(linked) == sorted(f"plots/{k}.png" for k in PLOT_TITLES)
    assert all((run / link).exists() for link in linked)


def test_metrics_json_round_trips(written: tuple[Path, str], full_analysis: Analysis) -> None:
    run, _ = written
    data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert isinstance(data, list) and len(data) == len(full_analysis.records)
    loaded = [MetricRecord.model_validate(row) for row in data]
    for got, want in zip(loaded, full_analysis.records, strict=True):
        assert (got.judge, got.metric, got.condition, got.subset, got.filtered, got.n) == (
            want.judge,
            want.metric,
            want.condition,
            want.subset,
            want.filtered,
            want.n,
        )
        for name in ("value", "ci_low", "ci_high", "p"):
            a, b = getattr(got, name), getattr(want, name)
            if b is None or (isinstance(b, float) and math.isnan(b)):
                assert a is None
            else:
                assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
        assert got.extras().keys() == want.extras().keys()
    # INTERFACE fields first, in the documented order
    assert list(data[0])[:10] == [
        "judge",
        "metric",
        "condition",
        "subset",
        "filtered",
        "value",
        "n",
        "ci_low",
        "ci_high",
        "p",
    ]


def test_metrics_csv_matches_json(written: tuple[Path, str]) -> None:
    run, _ = written
    frame = pd.read_csv(run / "metrics.csv")
    data = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert len(frame) == len(data)
    assert list(frame.columns[:10]) == list(data[0])[:10]
    row = data[len(data) // 2]
    match = frame[
        (frame.judge == row["judge"])
        & (frame.metric == row["metric"])
        & (frame.condition == row["condition"])
        & (frame.subset == row["subset"])
        & (frame.filtered == row["filtered"])
    ]
    assert len(match) == 1
    if row["value"] is not None:
        assert match.iloc[0]["value"] == pytest.approx(row["value"])


def test_html_is_self_contained(written: tuple[Path, str], full_analysis: Analysis) -> None:
    run, _ = written
    html = (run / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html
    assert "default-src 'none'" in html  # the page may fetch nothing, even by mistake
    sources = re.findall(r'<img [^>]*src="([^"]+)"', html)
    assert len(sources) == len(PLOT_TITLES)
    for src in sources:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_MAGIC)
    for key in _sections(full_analysis):
        assert f'<section id="{key}">' in html, key
    for key in PLOT_TITLES:
        assert f'id="plot-{key}"' in html, key


def test_verdict_comes_first_everywhere(written: tuple[Path, str], full_analysis: Analysis) -> None:
    run, terminal = written
    html = (run / "report.html").read_text(encoding="utf-8")
    positions = [html.index(f'<section id="{key}">') for key in _sections(full_analysis)]
    assert positions == sorted(positions) and _sections(full_analysis)[0] == "verdict"
    md = (run / "report.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", md, re.M)
    assert headings[0] == "Readiness verdict"
    assert terminal.lstrip().startswith("Readiness verdict")
    for verdict in full_analysis.readiness:
        assert verdict.status.upper() in terminal


def test_the_terminal_gives_each_verdict_its_deciding_checks_and_the_files_every_check(
    written: tuple[Path, str], full_analysis: Analysis
) -> None:
    """A 23-language study has 96 verdicts of eight reasons each (743 terminal lines): the terminal
    prints, per part that did not pass, the check that decided it; report.md keeps every check."""
    run, terminal = written
    flat = " ".join(terminal.split())
    md = " ".join((run / "report.md").read_text(encoding="utf-8").split())
    verdicts = full_analysis.readiness
    assert {v.status for v in verdicts} >= {"fail"} and any(len(v.reasons) > len(v.why) for v in verdicts)
    for v in verdicts:
        for reason in v.reasons:
            assert " ".join(reason.split())[1:] in md  # every check, in the file
        deciding = {" ".join(r.split()) for r in v.why.values()}
        assert all(r[1:] in flat for r in deciding)
    assert ("Every check within its limit." in flat) == any(v.status == "pass" for v in verdicts)
    assert not full_analysis.completeness.complete and "Incomplete run: no pass until every" in flat
    decided = {" ".join(r.split())[1:] for v in verdicts for r in v.why.values()}
    undeciding = {" ".join(r.split())[1:] for v in verdicts for r in v.reasons} - decided
    assert undeciding and not any(r in flat for r in undeciding)  # a passed check stays in the files


def test_a_verdict_without_a_deciding_check_keeps_every_reason_in_the_terminal(
    full_analysis: Analysis,
) -> None:
    """A fail that names no deciding check (a verdict from elsewhere, an older readiness) is never
    shortened to the pass's line: the terminal prints all its reasons."""
    failed = next(v for v in full_analysis.readiness if v.status == "fail")
    bare = failed.model_copy(update={"why": {}})
    analysis = full_analysis.model_copy(update={"readiness": [bare]})
    console = Console(record=True, width=220)
    print_sections(console, build_sections(analysis))
    flat = " ".join(console.export_text().split())
    assert "Every check within its limit." not in flat
    assert all(" ".join(r.split())[1:] in flat for r in failed.reasons)


def test_a_pass_is_one_line_in_the_terminal_and_every_check_in_the_files(
    tmp_path: Path, full_analysis: Analysis
) -> None:
    """The other side: a passing verdict (planted: the fixture's run is incomplete, so it has none)
    reads "Every check within its limit." in the terminal, its checks only in report.md."""
    failed = next(v for v in full_analysis.readiness if v.status == "fail")
    passed = failed.model_copy(
        update={"status": "pass", "baseline": "pass", "invariance": "pass", "why": {}, "complete": True}
    )
    analysis = full_analysis.model_copy(update={"readiness": [passed]})
    console = Console(record=True, width=220)
    paths = write_report(RunDir(tmp_path), analysis, html=False)
    print_sections(console, paths.sections)
    flat = " ".join(console.export_text().split())
    md = " ".join(paths.report_md.read_text(encoding="utf-8").split())
    assert "Every check within its limit." in flat and "Every check within its limit." not in md
    for reason in passed.reasons:
        assert " ".join(reason.split())[1:] in md and " ".join(reason.split())[1:] not in flat


def test_tables_show_the_analysis_numbers(written: tuple[Path, str], full_analysis: Analysis) -> None:
    """Spot-check rendered numbers against records: accuracy, flip rate, McNemar b/c, tie-probe share."""
    run, _ = written
    md = (run / "report.md").read_text(encoding="utf-8")
    judge = full_analysis.judges[0].judge

    def find(metric: str, condition: str) -> MetricRecord:
        return next(
            r
            for r in full_analysis.records
            if r.judge == judge and r.metric == metric and r.condition == condition and r.subset == "all"
            if not r.filtered
        )

    acc = find("strict_accuracy", "zh")
    assert acc.value is not None and acc.ci_low is not None and acc.ci_high is not None
    text = f"{100 * acc.value:.1f} [{100 * acc.ci_low:.1f}, {100 * acc.ci_high:.1f}]"
    assert text in md
    flip = find("flip_rate", "en->ls")
    assert flip.value is not None
    assert f"{100 * flip.value:.1f}" in md
    mc = find("mcnemar", "en->zh")
    extra = mc.extras()
    assert re.search(rf"\| {re.escape(judge)} \| en->zh \| {mc.n} \| {extra['b']} \| {extra['c']} \|", md)
    share = find("tie_probe_en_share", "zh")
    assert share.value is not None
    assert f"{100 * share.value:.1f}" in md
    assert f"{len(full_analysis.flagged_items)} item(s) flagged" in md
    assert "| mean of judges |" in md


def test_markdown_tables_are_well_formed(written: tuple[Path, str]) -> None:
    run, _ = written
    md = (run / "report.md").read_text(encoding="utf-8")
    blocks = re.findall(r"((?:^\|.*\|\n)+)", md, re.M)
    assert len(blocks) >= 8
    for block in blocks:
        widths = {len(re.split(r"(?<!\\)\|", line)) for line in block.strip().splitlines()}
        assert len(widths) == 1, block[:200]


def test_en_only_run_says_not_measured(tmp_path: Path, en_only_analysis: Analysis) -> None:
    paths = write_report(RunDir(tmp_path), en_only_analysis)
    assert paths.report_html is not None
    html = paths.report_html.read_text(encoding="utf-8")
    md = paths.report_md.read_text(encoding="utf-8")
    for section in ("flips", "tie_probes", "comparisons"):
        chunk = html.split(f'<section id="{section}">', 1)[1].split("</section>", 1)[0]
        assert "Not measured" in chunk, section
    # the verdict is the en baseline alone (invariance not assessed: no language switch to test)
    verdict = html.split('<section id="verdict">', 1)[1].split("</section>", 1)[0]
    assert "invariance not assessed" in verdict.lower()
    assert md.count("Not measured") >= 3
    assert set(paths.plots) == {"accuracy", "position", "subset_heatmap"}
    assert "| mean of judges |" not in md  # one judge: no mean row
    assert json.loads(paths.metrics_json.read_text(encoding="utf-8"))


def test_stale_plots_are_removed(tmp_path: Path, full_analysis: Analysis, en_only_analysis: Analysis) -> None:
    run = RunDir(tmp_path)
    write_report(run, full_analysis, html=False)
    assert (tmp_path / "plots" / "tie_probe.png").exists()
    paths = write_report(run, en_only_analysis, html=False)
    assert not (tmp_path / "plots" / "tie_probe.png").exists()
    assert paths.report_html is None and not (tmp_path / "report.html").exists()


def test_awkward_values_render_safely(tmp_path: Path, awkward_analysis: Analysis) -> None:
    console = Console(record=True, width=200)
    paths = write_report(RunDir(tmp_path), awkward_analysis)
    print_sections(console, paths.sections)
    assert paths.report_html is not None
    html = paths.report_html.read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    data = json.loads(paths.metrics_json.read_text(encoding="utf-8"))  # NaN is not JSON: written as null
    nan_row = next(r for r in data if r["metric"] == "tie_half_accuracy")
    assert nan_row["value"] is None
    md = paths.report_md.read_text(encoding="utf-8")
    # pipes escaped in Markdown cells, and no tag opens there (issue 17: it did, in report.md)
    assert "weird\\|&lt;script>" in md and "<script>" not in md
    assert "— (n=10)" in md  # a None value says so, with its n
    assert "INCONCLUSIVE" in console.export_text()


def test_all_calls_missing_still_writes_a_report(tmp_path: Path) -> None:
    """Every call failed: the report says so instead of drawing empty charts or crashing."""
    from judgebench.analysis import ReportSettings, analyze
    from judgebench.records import Judgment

    failed = [
        Judgment(
            judge="x",
            item_id=f"Natural/{i}",
            subset="Natural",
            kind="pair",
            condition="en",
            order=o,
            error="boom",
        )
        for i in range(3)
        for o in ("orig", "swap")
    ]
    analysis = analyze(failed, settings=ReportSettings(bootstrap_samples=10))
    paths = write_report(RunDir(tmp_path), analysis)
    assert paths.plots == {}
    md = paths.report_md.read_text(encoding="utf-8")
    assert "| x | 6 | 0 | 6 | 0 | *6* |" in md  # planned, never made, judgments, answered, missing
    assert paths.report_html is not None and "<img" not in paths.report_html.read_text(encoding="utf-8")


def test_metrics_json_is_the_indented_dump_byte_for_byte(written: tuple[Path, str]) -> None:
    """metrics_json lays rows out through the C encoder: its text must be json.dumps(indent=2)'s, for
    the rows of a real analysis and for rows holding lists, objects, escapes or nothing."""
    run, _ = written
    rows = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    odd = [{}, {"a": [1, {"b": 2.5}], "c": 'x\n"y', "d": None}, {"e": 1e-300, "f": True, "g": "中文"}]
    for case in (rows, odd, []):
        assert metrics_json(case) == json.dumps(case, ensure_ascii=False, indent=2) + "\n"
    assert len(rows) > 100


def test_the_length_artefact_in_every_format(written: tuple[Path, str], full_analysis: Analysis) -> None:
    """The length baselines and the split (issue 47): in metrics.json, report.md, report.html and the
    terminal; per subset in the files; the length probe beside the data's own artefact."""
    run, terminal = written
    rows = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    margin = [r for r in rows if r["metric"] == "accuracy_over_length_baseline" and r["judge"] != "mean"]
    assert margin and all(r["length_rule"].startswith("length_baseline_") for r in margin)
    split = next(
        r for r in full_analysis.records
        if r.metric == "accuracy_gold_longer" and r.condition == "en" and r.subset == "all" and not r.filtered
        and r.judge != "mean"
    )  # fmt: skip
    md = (run / "report.md").read_text(encoding="utf-8")
    html = (run / "report.html").read_text(encoding="utf-8")
    for text in ("Length artefact", "Gold longer %", "Shorter (tokens) %", "Per subset"):
        assert text in md and text in html, text
    assert f"{100 * split.value:.1f} [{100 * split.ci_low:.1f}, {100 * split.ci_high:.1f}]" in md
    assert "The length probe beside the data's own length artefact" in md
    assert "Length artefact" in terminal and "Gold shorter %" in terminal
    assert "Adversarial/Neighbor" in md.split("## Length artefact")[1].split("\n## ")[0]  # per subset rows


def test_without_texts_there_is_no_length_section(en_only_analysis: Analysis) -> None:
    assert "length" not in _sections(en_only_analysis)
    verdict = en_only_analysis.readiness[0]
    assert any("split by length was not read" in r for r in verdict.reasons)
