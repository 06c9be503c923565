"""LLMBar download: from a 127.0.0.1 server over ../shared/llmbar (JUDGEBENCH_LLMBAR_URL), verified,
cached atomically; tampered files are refused and nothing is saved; offline fails at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from judgebench.data import LLMBAR_SUBSETS, OTHER_SETS, PUBLISHED_SHA256, DatasetDownloadError, load_dataset
from tests.data.conftest import FileServer
from tests.servers.base import Reply


def cached_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


def test_download_verifies_caches_and_matches_the_local_copy(
    serve_llmbar: Callable[..., FileServer], llmbar_dir: Path, isolated_cache: Path
) -> None:
    server = serve_llmbar()
    ds = load_dataset("llmbar")
    local = load_dataset("llmbar", data_dir=llmbar_dir)
    assert ds.checksum == local.checksum
    assert ds.describe() == local.describe()
    assert ds.source == server.url
    assert sorted(r.path for r in server.requests) == sorted(f"/{rel}" for rel in LLMBAR_SUBSETS.values())
    for rel in LLMBAR_SUBSETS.values():
        assert (isolated_cache / "llmbar" / rel).read_bytes() == (llmbar_dir / rel).read_bytes()
    assert not [p for p in cached_files(isolated_cache) if p.name.startswith(".")]  # no temp files left

    again = load_dataset("llmbar")  # served from the cache, verified, no request
    assert again.checksum == ds.checksum
    assert len(server.requests) == len(LLMBAR_SUBSETS)


def test_download_of_a_set_with_a_caret_in_its_path(serve_llmbar: Callable[..., FileServer]) -> None:
    server = serve_llmbar()
    ds = load_dataset("llmbar:Processed/LLMEval^2")
    assert [r.path for r in server.requests] == ["/Dataset/Processed/LLMEval%5E2/dataset.json"]
    assert ds.items[0].id == "Processed/LLMEval^2/0"


def test_tampered_download_is_refused_and_not_saved(
    serve_llmbar: Callable[..., FileServer], isolated_cache: Path
) -> None:
    target = LLMBAR_SUBSETS["Adversarial/GPTInst"]

    def tamper(rel: str, data: bytes) -> Reply | None:
        return (
            Reply(status=200, body=data.replace(b'"label": 1', b'"label": 2', 1)) if rel == target else None
        )

    serve_llmbar(tamper)
    with pytest.raises(DatasetDownloadError) as info:
        load_dataset("llmbar")
    message = str(info.value)
    assert target in message and PUBLISHED_SHA256[target] in message and "nothing was saved" in message
    assert not (isolated_cache / "llmbar" / target).exists()
    assert all(not p.name.startswith(".") for p in cached_files(isolated_cache))


def test_corrupt_cache_file_is_downloaded_again(
    serve_llmbar: Callable[..., FileServer], llmbar_dir: Path, isolated_cache: Path
) -> None:
    server = serve_llmbar()
    rel = OTHER_SETS["CaseStudy/Negation"]
    bad = isolated_cache / "llmbar" / rel
    bad.parent.mkdir(parents=True)
    bad.write_text("[]", encoding="utf-8")
    ds = load_dataset("llmbar:CaseStudy/Negation")
    assert len(server.requests) == 1
    assert bad.read_bytes() == (llmbar_dir / rel).read_bytes()
    assert len(ds) > 0


def test_offline_fails_at_once_with_the_way_out(
    monkeypatch: pytest.MonkeyPatch, closed_port_url: str, isolated_cache: Path
) -> None:
    monkeypatch.setenv("JUDGEBENCH_LLMBAR_URL", closed_port_url)
    seen: list[dict[str, Any]] = []
    real_client = httpx.Client

    def spy(**kwargs: Any) -> httpx.Client:
        seen.append(kwargs)
        return real_client(**kwargs)

    monkeypatch.setattr(httpx, "Client", spy)
    with pytest.raises(DatasetDownloadError) as info:
        load_dataset("llmbar")
    message = str(info.value)
    assert "--data-dir" in message and "Dataset/" in message and closed_port_url in message
    timeout = seen[0]["timeout"]
    assert isinstance(timeout, httpx.Timeout) and timeout.connect is not None and timeout.connect <= 10
    assert cached_files(isolated_cache) == []


def test_http_error_is_one_attempt(serve_llmbar: Callable[..., FileServer]) -> None:
    server = serve_llmbar(lambda rel, data: Reply(status=503, body="busy", content_type="text/plain"))
    with pytest.raises(DatasetDownloadError, match="answered HTTP 503"):
        load_dataset("llmbar:Natural")
    assert len(server.requests) == 1


def test_missing_file_on_the_server(
    serve_llmbar: Callable[..., FileServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve_llmbar()
    monkeypatch.setenv("JUDGEBENCH_LLMBAR_URL", server.url + "/elsewhere/")
    with pytest.raises(DatasetDownloadError, match="answered HTTP 404") as info:
        load_dataset("llmbar:Natural")
    assert f"{server.url}/elsewhere/Dataset/LLMBar/Natural/dataset.json" in str(info.value)
