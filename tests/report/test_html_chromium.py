"""report.html rendered by headless Chromium (Debian's package): the embedded plots really display.

Skipped where no chromium is installed. The check is on pixels: the judge colours of the bar charts
only appear on screen if the base64 images decoded and were laid out.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from PIL import Image

from judgebench.analysis import Analysis
from judgebench.report import write_report
from judgebench.report.plots import PALETTE
from judgebench.store.run_folder import RunDir

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot_report.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshot_report", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _share_of(pixels: np.ndarray, hex_colour: str, tol: int = 6) -> float:
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    close = np.abs(pixels[..., :3].astype(int) - rgb).max(axis=-1) <= tol
    return float(close.mean())


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_report_renders_with_its_plots(tmp_path: Path, full_analysis: Analysis) -> None:
    paths = write_report(RunDir(tmp_path), full_analysis)
    assert paths.report_html is not None
    png = _script().screenshot(paths.report_html, tmp_path / "shot.png", width=1300, height=9000)
    pixels = np.asarray(Image.open(png).convert("RGB"))
    assert pixels.shape[:2] == (9000, 1300)
    # the two judges' bars (first and second palette colours) are visible: the data-URI images rendered
    assert _share_of(pixels, PALETTE[0]) > 0.001
    assert _share_of(pixels, PALETTE[1]) > 0.001
    # and the page is not a blank or an error page: most of it is white, but far from all
    white = float((pixels.min(axis=-1) > 245).mean())
    assert 0.3 < white < 0.97
