"""The allocators the CLI sets for itself (allocators.py): jemalloc for pyarrow and glibc's mmap
threshold raised, unless the user set either; each check runs in a fresh interpreter, since both are
settings of the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from judgebench.allocators import ARROW_POOL, GLIBC_MMAP

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

_PROBE = """
import json, sys
{before}
from judgebench.allocators import tune_allocators
done = tune_allocators()
import pyarrow as pa
print(json.dumps([done, pa.default_memory_pool().backend_name]))
"""


def _run(code: str, **env: str) -> list[object]:
    clean = {k: v for k, v in os.environ.items() if k not in (ARROW_POOL, GLIBC_MMAP)}
    out = subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    assert out.stderr == ""  # no warning from pyarrow about the pool it was given
    result: list[object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_pyarrow_runs_on_jemalloc_and_glibc_keeps_big_arrays_in_its_heap() -> None:
    done, backend = _run(_PROBE.format(before=""))
    assert done == ["arrow pool: jemalloc", "glibc mmap threshold: 1 GiB"]
    assert backend == "jemalloc"


def test_a_process_that_has_pyarrow_already_gets_the_pool_set() -> None:
    done, backend = _run(_PROBE.format(before="import pyarrow"))
    assert "arrow pool: jemalloc" in done  # type: ignore[operator]
    assert backend == "jemalloc"


def test_what_the_user_set_wins() -> None:
    done, backend = _run(_PROBE.format(before=""), **{ARROW_POOL: "system", GLIBC_MMAP: "131072"})
    assert done == [] and backend == "system"


def test_the_cli_sets_them_before_any_command() -> None:
    code = (
        "import os, sys\n"
        "from judgebench.cli import main\n"
        "sys.argv = ['judgebench', '--version']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"import json; print(json.dumps([os.environ.get({ARROW_POOL!r}), 'pyarrow' in sys.modules]))"
    )
    pool, pyarrow_loaded = _run(code)
    assert pool == "jemalloc" and pyarrow_loaded is False  # chosen without importing pyarrow
