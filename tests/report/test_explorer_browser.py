"""The item explorer in a real browser: Debian's headless Chromium loads report.html, runs its inlined
script, and the DOM it dumps shows the rows, a filter applied and a detail view opened; a screenshot of
the opened view is not blank; the 13,408-judgment run of bench_report opens in under 2 s.

Marked `browser`; skipped (with the reason shown) where no chromium is installed. The view is chosen
through the URL hash (report.html#explorer?flipped=1&open=ITEM), which the page reads on load.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

import numpy as np
import pytest
from PIL import Image

from judgebench.analysis import Analysis, ReportSettings, analyze
from judgebench.records import AuditFlag, Judgment
from judgebench.report import write_report
from judgebench.report.explorer import ExplorerData, ItemTexts, explorer_rows
from judgebench.store.run_folder import RunDir

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        BROWSER is None, reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def _chromium(url: str, *extra: str, virtual_time: bool = True) -> str:
    """Run headless Chromium on `url`; with virtual time, timers and idle work run before the dump."""
    assert BROWSER is not None
    budget = ["--virtual-time-budget=5000"] if virtual_time else []
    with tempfile.TemporaryDirectory(prefix="jb-chromium-") as profile:
        cmd = [BROWSER, *FLAGS, f"--user-data-dir={profile}", *budget, *extra, url]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def _dom(html: Path, hash_: str = "") -> str:
    return _chromium(html.resolve().as_uri() + hash_, "--dump-dom")


def _attr(dom: str, element_id: str, name: str) -> str | None:
    tag = re.search(rf'<[a-z]+ [^>]*id="{element_id}"[^>]*>', dom)
    assert tag is not None, f"#{element_id} missing"
    value = re.search(rf'\b{name}="([^"]*)"', tag.group(0))
    return value.group(1) if value else None


def _rows(dom: str) -> list[tuple[str, str]]:
    return re.findall(r'<tr data-row="\d+" data-item="([^"]+)" data-judge="([^"]+)"', dom)


def _texts(judgments: list[Judgment]) -> dict[tuple[str, str], ItemTexts]:
    items = dict.fromkeys(j.item_id for j in judgments)
    return {
        (item, cond): ItemTexts(f"[{cond}] instruction of {item}", f"[{cond}] first", f"[{cond}] second")
        for item in items
        for cond in ("en", "zh", "ls")
    }


@pytest.fixture(scope="module")
def explorer(judgments: list[Judgment], flagged: list[str]) -> ExplorerData:
    audit = [
        AuditFlag(item_id=item, condition="zh", field="output_1", rule="empty", detail="empty")
        for item in flagged
    ]
    return ExplorerData(judgments, _texts(judgments), audit, ["en", "zh", "ls"])


@pytest.fixture(scope="module")
def report_html(
    tmp_path_factory: pytest.TempPathFactory, full_analysis: Analysis, explorer: ExplorerData
) -> Path:
    paths = write_report(RunDir(tmp_path_factory.mktemp("explorer")), full_analysis, explorer=explorer)
    assert paths.report_html is not None
    return paths.report_html


def test_explorer_lists_every_item_and_judge(report_html: Path, explorer: ExplorerData) -> None:
    dom = _dom(report_html)
    assert _attr(dom, "jbx", "data-ready") == "1"
    expected = [(r.item_id, r.judge) for r in explorer_rows(explorer)]
    assert _attr(dom, "jbx-status", "data-count") == str(len(expected)) == "80"
    assert _rows(dom) == expected  # 80 rows: one page


def test_filters_apply(report_html: Path, explorer: ExplorerData) -> None:
    rows = explorer_rows(explorer)
    flipped = [(r.item_id, r.judge) for r in rows if r.flipped]
    assert 0 < len(flipped) < len(rows)
    dom = _dom(report_html, "#explorer?flipped=1")
    assert _attr(dom, "jbx-status", "data-count") == str(len(flipped))
    assert _rows(dom) == flipped
    assert re.search(r'<input type="checkbox" id="jbx-flipped"[^>]*>', dom)
    judge = rows[0].judge
    only = [
        (r.item_id, r.judge) for r in rows if r.judge == judge and r.inconsistent and r.subset == "Natural"
    ]
    dom = _dom(report_html, f"#explorer?judge={quote(judge)}&subset=Natural&incon=1")
    assert _rows(dom) == only
    flagged = {f.item_id for f in explorer.audit}
    dom = _dom(report_html, "#explorer?audit=1")
    assert {item for item, _ in _rows(dom)} == flagged
    dom = _dom(report_html, "#explorer?q=" + quote("instruction of Natural/3"))
    assert {item for item, _ in _rows(dom)} == {"Natural/3"}
    in_ls = [(r.item_id, r.judge) for r in rows if "ls" in r.flipped]
    assert in_ls != flipped
    dom = _dom(report_html, "#explorer?cond=ls&flipped=1")
    assert _rows(dom) == in_ls
    wrong = [(r.item_id, r.judge) for r in rows if r.wrong_en_only]
    assert wrong
    dom = _dom(report_html, "#explorer?wen=1")
    assert _rows(dom) == wrong


def test_sorting_by_a_column(report_html: Path, explorer: ExplorerData) -> None:
    rows = explorer_rows(explorer)
    most = max(len(r.flipped) for r in rows)
    dom = _dom(report_html, "#explorer?sort=flips&desc=1")
    first = _rows(dom)[0]
    assert next(len(r.flipped) for r in rows if (r.item_id, r.judge) == first) == most
    assert 'aria-sort="descending"' in dom


def test_detail_view_shows_texts_side_by_side_and_raw_answers(report_html: Path) -> None:
    judge = "anthropic:claude-haiku-4-5"
    dom = _dom(report_html, f"#explorer?open={quote('Natural/1')}&oj={quote(judge)}")
    assert _attr(dom, "jbx-detail", "data-item") == "Natural/1"
    assert _attr(dom, "jbx-detail", "data-judge") == judge
    detail = dom.split('id="jbx-detail"', 1)[1].split('class="jbx-scroll"', 1)[0]
    for cond in ("en", "zh", "ls"):
        assert f"[{cond}] instruction of Natural/1" in detail
        assert f"[{cond}] second" in detail
    assert "audit: zh output_1: empty (empty)" in detail  # Natural/1 is audit-flagged
    assert "HTTP 503" in detail or "{}" in detail  # the raw answers (or the call errors) are listed


def test_screenshot_of_an_opened_view_is_not_blank(report_html: Path, tmp_path: Path) -> None:
    png = tmp_path / "explorer.png"
    url = report_html.resolve().as_uri() + "#explorer?flipped=1&open=" + quote("Natural/1")
    # a window taller than the page: headless Chromium draws a scrolled viewport blank
    _chromium(url, f"--screenshot={png}", "--window-size=1300,16000")
    pixels = np.asarray(Image.open(png).convert("RGB"))
    assert pixels.shape[:2] == (16000, 1300)
    white = float((pixels.min(axis=-1) > 245).mean())
    assert 0.3 < white < 0.98  # text, tables, plots and the explorer on white: neither blank nor an error
    flip = np.array([0xFF, 0xF1, 0xE6])  # the flipped cells' background: the explorer's rows are drawn
    assert (np.abs(pixels.astype(int) - flip).max(axis=-1) <= 3).mean() > 0.0005
    detail = np.array([0xDB, 0xE9, 0xF8])  # the opened row's highlight
    assert (np.abs(pixels.astype(int) - detail).max(axis=-1) <= 3).any()


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_report", SCRIPTS / "bench_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_full_size_run_opens_fast(tmp_path: Path) -> None:
    """bench_report's 4-judge run: 13,408 judgments, 1,676 rows, texts in three conditions."""
    bench = _bench()
    judgments, flagged = bench.synthetic_judgments()
    assert len(judgments) == 13_408
    analysis = analyze(judgments, flagged_items=flagged, settings=ReportSettings(bootstrap_samples=0))
    paths = write_report(RunDir(tmp_path), analysis, explorer=bench.synthetic_explorer(judgments, flagged))
    assert paths.report_html is not None
    # real time, not virtual: the inline script runs before the load event, which --dump-dom awaits
    dom = _chromium(paths.report_html.resolve().as_uri(), "--dump-dom", virtual_time=False)
    assert _attr(dom, "jbx-status", "data-count") == "1676"
    assert len(_rows(dom)) == 100  # rendered a page at a time
    opened = float(_attr(dom, "jbx", "data-open-ms") or "inf")  # navigation start to explorer drawn
    assert opened < 2000.0, opened
    last = _dom(paths.report_html, "#explorer?page=17")
    assert len(_rows(last)) == 76


def test_a_page_past_its_row_limit_says_what_it_left_out(tmp_path: Path, explorer: ExplorerData) -> None:
    every = explorer_rows(explorer)
    limited = ExplorerData(
        explorer.judgments, explorer.texts, explorer.audit, explorer.conditions, row_limit=10
    )
    analysis = analyze(explorer.judgments, settings=ReportSettings(bootstrap_samples=0))
    paths = write_report(RunDir(tmp_path), analysis, explorer=limited)
    assert paths.report_html is not None
    dom = _dom(paths.report_html)
    assert _attr(dom, "jbx-status", "data-count") == "10"
    assert _attr(dom, "jbx-left-out", "data-left-out") == str(len(every) - 10)
    notice = re.search(r'id="jbx-left-out"[^>]*>([^<]*)<', dom)
    assert (
        notice is not None and "--explorer all" in notice.group(1) and "--export-unstable" in notice.group(1)
    )
    full = _dom(report_html_of(tmp_path / "all", analysis, explorer))
    assert 'id="jbx-left-out"' not in full  # every row on the page: no notice


def report_html_of(folder: Path, analysis: Analysis, explorer: ExplorerData) -> Path:
    folder.mkdir()
    paths = write_report(RunDir(folder), analysis, explorer=explorer)
    assert paths.report_html is not None
    return paths.report_html
