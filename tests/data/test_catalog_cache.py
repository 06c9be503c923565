"""The registry reads configs/hub_datasets.toml once per version of the file (issue 42): `resolve` and
`family_of` ask for the families on every dataset a command names, and each call parsed and validated
the whole file again. Shown without patching any of judgebench: the file is rewritten behind the
cache's back with its old mtime and size (a re-read would see the new text), then touched (the edit
is seen), then broken (the error is not hidden by what was kept)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judgebench.data.catalog import families, family_of, resolve
from judgebench.errors import ConfigError

OLD = "RewardBench's filtered split, English"
NEW = "RewardBench's filtered split, ENGLISH"  # as long: the file keeps its size


@pytest.fixture
def hub_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    configs = tmp_path / "configs"
    configs.mkdir()
    source = Path(__file__).resolve().parents[2] / "configs" / "hub_datasets.toml"
    path = configs / "hub_datasets.toml"
    path.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    assert OLD in path.read_text(encoding="utf-8")
    monkeypatch.setenv("JUDGEBENCH_CONFIGS", str(configs))
    return path


def _rewrite_keeping_the_stamp(path: Path, old: str, new: str) -> None:
    """Change the text, not the size or the mtime: only a fresh read can see it."""
    assert len(old.encode()) == len(new.encode())
    stat = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns


def _touch(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


@pytest.mark.parametrize("checked", [True, False], ids=["validated", "help"])
def test_a_second_call_does_not_read_the_file_again(hub_file: Path, checked: bool) -> None:
    assert OLD in families(checked=checked)["rewardbench"].description
    _rewrite_keeping_the_stamp(hub_file, OLD, NEW)
    assert OLD in families(checked=checked)["rewardbench"].description  # kept, not read again
    _touch(hub_file)
    assert NEW in families(checked=checked)["rewardbench"].description  # an edited file is read anew


def test_resolve_and_family_of_see_an_edited_file(hub_file: Path) -> None:
    assert family_of(resolve("rewardbench")).name == "rewardbench"
    assert resolve("toy-table").name == "PATH"  # no such table yet: a file of the user's own
    text = hub_file.read_text(encoding="utf-8")
    hub_file.write_text(
        text + '\n[toy-table]\nrepo = "a/b"\nrevision = "x"\nlocal_dir = "b"\nfiles = "*.parquet"\n'
        'description = "a table added while the process runs"\n',
        encoding="utf-8",
    )
    _touch(hub_file)
    assert family_of(resolve("toy-table")).description == "a table added while the process runs"


def test_a_file_broken_after_a_good_read_is_an_error_not_the_old_tables(hub_file: Path) -> None:
    assert "rewardbench" in families()
    hub_file.write_text("[rewardbench\n", encoding="utf-8")
    _touch(hub_file)
    with pytest.raises(ConfigError, match=r"hub_datasets\.toml"):
        families()
    with pytest.raises(ConfigError, match="not valid TOML"):
        families(checked=False)
