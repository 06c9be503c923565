"""Where judgebench finds its bundled configs and data, and where it keeps its user cache."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
# The repository root in a source checkout or editable install (pyproject's documented install).
PROJECT_ROOT = _PACKAGE.parent.parent


def configs_dir() -> Path:
    """`configs/` of the project: conditions, templates, judges, prices."""
    override = os.environ.get("JUDGEBENCH_CONFIGS")
    return Path(override) if override else PROJECT_ROOT / "configs"


def data_dir() -> Path:
    """`data/` of the project: the bundled sample, its variants, the A-BB examples."""
    override = os.environ.get("JUDGEBENCH_DATA")
    return Path(override) if override else PROJECT_ROOT / "data"


def cache_dir() -> Path:
    """User cache: downloaded datasets, the response store, model weights (JUDGEBENCH_CACHE_DIR)."""
    override = os.environ.get("JUDGEBENCH_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "judgebench"
