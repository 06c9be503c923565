"""A fake installed distribution: a dist-info folder with one entry point, for plugin tests (put its
folder on sys.path and the entry point is found as an installed package's would be)."""

from __future__ import annotations

from pathlib import Path


def fake_distribution(where: Path, name: str, group: str, entry: str) -> Path:
    """`where/NAME-0.1.dist-info` declaring `entry` (`key = module:attr`) in `group`; returns `where`."""
    dist = where / f"{name}-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[{group}]\n{entry}\n", encoding="utf-8")
    return where
