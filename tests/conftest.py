"""Test-wide safety and isolation.

Every test runs with JUDGEBENCH_OFFLINE_TESTS=1 (the client refuses any provider host that is not
127.0.0.1/localhost, so no test can reach a real API), a private cache folder, and no real API keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LLMBAR = REPO.parent / "shared" / "llmbar"

_KEY_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "OPENAI_COMPATIBLE_API_KEY",
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    monkeypatch.setenv("JUDGEBENCH_OFFLINE_TESTS", "1")
    monkeypatch.setenv("JUDGEBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # the embedded model's weights are assembled once per machine, not once per test
    monkeypatch.setenv("JUDGEBENCH_MODELS_DIR", str(Path.home() / ".cache" / "judgebench" / "models"))
    for var in _KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture
def llmbar_dir() -> Path:
    if not (LLMBAR / "Dataset" / "LLMBar").is_dir():
        pytest.skip("../shared/llmbar is not present")
    return LLMBAR


_SLOW_TOO = ("browser", "local_model")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A browser or embedded-model test is slow too, so `-m "not slow"` is the quick subset."""
    for item in items:
        slow_too = any(item.get_closest_marker(name) for name in _SLOW_TOO)
        if slow_too and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
