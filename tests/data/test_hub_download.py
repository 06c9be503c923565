"""The hub download builds the right requests: against a 127.0.0.1 server standing in for the hub
(HF_ENDPOINT), files listed from the repository at the pinned revision, checked against the listed
sums, cached in the user cache; a later load needs no network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judgebench.data import load_dataset
from judgebench.data.hub import HubDownloadError
from judgebench.data.rewardbench import hub_dataset
from tests.data.hub_server import HubServer
from tests.data.rewardbench_fixture import language_file, write_snapshot

RB = hub_dataset("rewardbench")
MRB = hub_dataset("m-rewardbench")


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """The fixture snapshot plus files a real repository also holds and the loader must not fetch."""
    root = write_snapshot(tmp_path / "published")
    (root / "reward-bench" / "README.md").write_text("card\n")
    (root / "reward-bench" / "data" / "raw-00000-of-00001.parquet").write_bytes(b"raw split")
    (root / "multilingual-reward-bench" / "zho_Hans" / "filtered.json").write_text("[]\n")
    (root / "multilingual-reward-bench" / "translation").mkdir()
    (root / "multilingual-reward-bench" / "translation" / "test-00000-of-00001.parquet").write_bytes(b"x")
    return root


@pytest.fixture
def hub(published: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    server = HubServer(
        repos={RB.repo: published / RB.local_dir, MRB.repo: published / MRB.local_dir},
        revisions={RB.repo: RB.revision, MRB.repo: MRB.revision},
    ).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    yield server
    server.stop()


def test_download_lists_the_pinned_revision_fetches_only_what_it_needs_and_caches(
    hub: HubServer, published: Path, isolated_cache: Path
) -> None:
    ds = load_dataset("m-rewardbench")
    local = load_dataset("m-rewardbench", data_dir=published)
    assert ds.checksum == local.checksum
    assert ds.describe()["languages"] == local.describe()["languages"]
    assert f"hf://datasets/{MRB.repo}@{MRB.revision}" in ds.source
    assert f"hf://datasets/{RB.repo}@{RB.revision}" in ds.source

    paths = [(s.method, s.path) for s in hub.seen]
    assert ("GET", f"/api/datasets/{RB.repo}/revision/{RB.revision}") in paths
    assert ("GET", f"/api/datasets/{RB.repo}/tree/{RB.revision}") in paths
    assert ("GET", f"/api/datasets/{MRB.repo}/tree/{MRB.revision}") in paths
    fetched = sorted({p for m, p in paths if m == "GET" and "/resolve/" in p})
    assert fetched == sorted(
        [
            f"/datasets/{RB.repo}/resolve/{RB.revision}/data/filtered-00000-of-00001.parquet",
            *(
                f"/datasets/{MRB.repo}/resolve/{MRB.revision}/{config}/test-00000-of-00001.parquet"
                for config in MRB.languages.values()
            ),
        ]
    )
    # every request names the pinned commit; the listing is recursive
    assert all(RB.revision in p or MRB.revision in p for _, p in paths)
    assert all("recursive=true" in s.query.lower() for s in hub.seen if "/tree/" in s.path)
    assert all(str(isolated_cache) in path for path in ds.files)

    before = len(hub.seen)
    again = load_dataset("m-rewardbench")
    assert again.checksum == ds.checksum
    assert len(hub.seen) == before  # the complete snapshot in the cache needs no request


def test_a_file_that_does_not_match_the_listed_sum_is_refused(
    published: Path, monkeypatch: pytest.MonkeyPatch, isolated_cache: Path
) -> None:
    def tamper(rel: str, data: bytes) -> bytes:
        return data + b"!" if rel.startswith("data/filtered") else data

    server = HubServer(
        repos={RB.repo: published / RB.local_dir},
        revisions={RB.repo: RB.revision},
        tamper=tamper,
    ).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    try:
        with pytest.raises(HubDownloadError, match=r"not the [0-9a-f]+ the hub lists"):
            load_dataset("rewardbench")
    finally:
        server.stop()
    assert not list(isolated_cache.rglob("filtered-*.parquet"))


def test_an_unknown_revision_says_how_to_work_offline(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEBENCH_HF_REVISION_REWARDBENCH", "0" * 40)
    with pytest.raises(HubDownloadError) as info:
        load_dataset("rewardbench")
    message = str(info.value)
    assert "0" * 40 in message and "--data-dir" in message and hub.url in message


def test_an_unreachable_hub_fails_at_once(monkeypatch: pytest.MonkeyPatch, closed_port_url: str) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url)
    with pytest.raises(HubDownloadError, match="cannot reach the hub") as info:
        load_dataset("m-rewardbench")
    assert "--data-dir" in str(info.value)


def test_hf_hub_offline_uses_the_cache_and_never_the_network(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubDownloadError, match="HF_HUB_OFFLINE"):
        load_dataset("rewardbench")
    assert not hub.seen
    monkeypatch.delenv("HF_HUB_OFFLINE")
    first = load_dataset("rewardbench")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    seen = len(hub.seen)
    assert load_dataset("rewardbench").checksum == first.checksum
    assert len(hub.seen) == seen


def test_a_gzip_bomb_is_cut_at_the_listed_size(
    published: Path, monkeypatch: pytest.MonkeyPatch, isolated_cache: Path
) -> None:
    """Issue 29 (4). Before: a file sent as 64 KB of gzip was decoded whole (64 MiB written, then
    refused by its sum). Now: decoding stops a MiB past the size the hub lists, nothing is kept."""
    rel = next(
        p.relative_to(published / RB.local_dir).as_posix()
        for p in (published / RB.local_dir).rglob("filtered-*")
    )
    server = HubServer(
        repos={RB.repo: published / RB.local_dir}, revisions={RB.repo: RB.revision}, bombs={rel}
    ).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    try:
        with pytest.raises(
            HubDownloadError, match=r"cannot download .*: hub: response body over \d+ MiB, decoded"
        ):
            load_dataset("rewardbench")
    finally:
        server.stop()
    assert not list(isolated_cache.rglob("filtered-*.parquet"))


def test_the_hub_client_is_the_guarded_one(hub: HubServer, isolated_cache: Path) -> None:
    """The ordinary download still works through the guarded client (and it is the one in use)."""
    from huggingface_hub.utils._http import get_session

    ds = load_dataset("rewardbench")
    assert len(ds.items) > 0
    hooks = get_session().event_hooks["response"]
    assert any(getattr(h, "__module__", "") == "judgebench.wire" for h in hooks)


def test_the_pinned_revision_is_the_first_with_all_23_languages() -> None:
    assert MRB.revision == "d0a31dbfa024ad15d833aea2d53115d15180fa87"
    assert len(MRB.languages) == 23
    facts = MRB.facts()
    assert facts is not None and facts.lacks == ()
    old = MRB.revisions["bef4882ddbdd4634ab0f62849c9d9a891e09cf63"]
    assert set(old.lacks) == {"zho_Hans", "zho_Hant", "deu_Latn", "tur_Latn", "ukr_Cyrl", "vie_Latn"}


def test_a_download_whose_commit_lacks_a_language_names_it_and_fetches_nothing(
    published: Path, hub: HubServer, isolated_cache: Path
) -> None:
    language_file(published, "de").unlink()
    (published / MRB.local_dir / "deu_Latn").rmdir()
    with pytest.raises(HubDownloadError) as info:
        load_dataset("m-rewardbench")
    message = str(info.value)
    assert "de (deu_Latn)" in message and MRB.revision in message
    assert "zho_Hans" not in message  # only what is lacking is named
    assert not [s for s in hub.seen if "/resolve/" in s.path and MRB.repo in s.path]
    assert not list(isolated_cache.rglob("test-*.parquet"))
    # the languages that commit holds still load when only they are asked for
    assert set(load_dataset("m-rewardbench:zh,ja").variants) == {"zh", "ja"}


def test_a_revision_known_to_lack_languages_is_refused_before_any_request(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = "bef4882ddbdd4634ab0f62849c9d9a891e09cf63"
    monkeypatch.setenv("JUDGEBENCH_HF_REVISION_M_REWARDBENCH", old)
    with pytest.raises(HubDownloadError) as info:
        load_dataset("m-rewardbench:zh,ja,de")
    message = str(info.value)
    assert old in message and "zh (zho_Hans)" in message and "de (deu_Latn)" in message
    assert "ja (jpn_Jpan)" not in message
    assert MRB.revision in message and "JUDGEBENCH_HF_REVISION_M_REWARDBENCH" in message
    assert not hub.seen
