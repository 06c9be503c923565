"""Snapshots of Hugging Face hub dataset repositories, fetched through `huggingface_hub`.

A download is pinned to one commit (the `revision` of configs/hub_datasets.toml). The files to fetch
are listed from the repository at that commit (never guessed) and filtered by glob patterns; each is
downloaded into the user cache in the repository's own layout (`<cache>/hub/<folder>@<revision>/...`,
the layout `--data-dir` snapshots have), and checked against the SHA-256 the hub lists for it. Once a
snapshot is complete, its file list and sums are written beside it, so later loads need no network.

`HF_ENDPOINT` (a mirror, or a test server) is read at each call and handed to huggingface_hub, which
otherwise reads it only once, at import. Every hub request goes through `judgebench.wire`'s hooks:
a body is bounded by its decoded size (a file by the size the hub lists for it), a redirect to
another host is followed only without a credential header (httpx drops `Authorization` itself), and
any request to another origin than the hub's is sent without its credential headers.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from judgebench.config.paths import cache_dir
from judgebench.errors import JudgebenchError
from judgebench.store.atomic_files import atomic_write_text
from judgebench.wire import allow_body, sync_hooks

logger = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = "HF_ENDPOINT"
COMPLETE = ".judgebench-snapshot.json"
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0
# a listing or other API answer decodes to this much at most; a file to its listed size plus this
API_BODY_LIMIT = 64 * 1024 * 1024
FILE_SLACK = 1024 * 1024


class HubDownloadError(JudgebenchError):
    """A hub dataset could not be listed or fetched, or a file did not match its listed checksum."""


@dataclass(frozen=True)
class HubSnapshot:
    """A local copy of some files of one repository at one commit."""

    repo: str
    revision: str
    root: Path
    # repository path -> SHA-256 of the file's bytes
    files: dict[str, str]

    @property
    def source(self) -> str:
        return f"hf://datasets/{self.repo}@{self.revision}"


def _refuse(kind: str, message: str) -> Exception:
    return HubDownloadError(f"hub: {message}")


def _hooks() -> dict[str, list[Callable[[Any], None]]]:
    # a request to another origin than the hub's (a CDN, a URL a listing named) goes without credentials
    return sync_hooks(API_BODY_LIMIT, _refuse, cross_origin="credential-free", home=endpoint())


def _guarded_hub_client() -> Any:
    """huggingface_hub's own client, with the wire hooks after its own."""
    from huggingface_hub.utils._http import default_client_factory

    client = default_client_factory()
    ours = _hooks()
    theirs = client.event_hooks
    client.event_hooks = {k: [*theirs.get(k, []), *ours[k]] for k in ("request", "response")}
    return client


def _guard_hub_client() -> None:
    from huggingface_hub import set_client_factory

    set_client_factory(_guarded_hub_client)


def endpoint() -> str:
    """The hub to talk to: HF_ENDPOINT when set, else huggingface.co."""
    return (os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT).rstrip("/")


def snapshot_root(folder: str, revision: str) -> Path:
    return cache_dir() / "hub" / f"{folder}@{revision}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _offline_hint(folder: str) -> str:
    return (
        "without access to the hub, pass --data-dir DIR where DIR/"
        f"{folder}/ is a local snapshot (`hf download REPO --repo-type dataset --local-dir DIR/{folder}`), "
        f"or set {ENDPOINT_ENV} to a mirror"
    )


def _cached(root: Path, patterns: Sequence[str]) -> dict[str, str] | None:
    """The files of a complete earlier download with these patterns, if every one is intact."""
    marker = root / COMPLETE
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or recorded.get("patterns") != list(patterns):
        return None
    files = recorded.get("files")
    if not isinstance(files, dict):
        return None
    for rel, sha in files.items():
        path = root / rel
        if not path.is_file() or sha256_file(path) != sha:
            logger.warning("cached %s is missing or changed; fetching the snapshot again", path)
            return None
    return {str(k): str(v) for k, v in files.items()}


def _probe(repo: str, revision: str, folder: str) -> None:
    """One quick request for the revision, so that an unreachable hub fails at once (huggingface_hub
    would retry for half a minute) and a revision the repository lacks says so."""
    import httpx  # lazily: 0.1 s to import, and only a download needs it

    url = f"{endpoint()}/api/datasets/{repo}/revision/{quote(revision, safe='')}"
    timeout = httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        with httpx.Client(timeout=timeout, event_hooks=_hooks()) as client:
            response = client.get(url)
    except HubDownloadError:
        raise
    except httpx.HTTPError as exc:
        raise HubDownloadError(
            f"cannot reach the hub for {repo} at {endpoint()}: {type(exc).__name__}: {exc}. "
            f"{_offline_hint(folder)}"
        ) from None
    if response.status_code != 200:
        raise HubDownloadError(
            f"{url} answered HTTP {response.status_code} ({response.headers.get('x-error-code', 'error')}): "
            f"no revision {revision} of {repo} there. {_offline_hint(folder)}"
        )


def _listed(
    repo: str, revision: str, patterns: Sequence[str], folder: str
) -> dict[str, tuple[str | None, int | None]]:
    """Repository files at `revision` that match a pattern, with the SHA-256 the hub lists (LFS files)
    and the size it lists."""
    from huggingface_hub import HfApi  # imported on use: `data show sample` needs no hub client

    api = HfApi(endpoint=endpoint())
    try:
        entries = list(api.list_repo_tree(repo, repo_type="dataset", revision=revision, recursive=True))
    except HubDownloadError:
        raise
    except Exception as exc:  # any failure of the hub client: report it with the way out
        raise HubDownloadError(
            f"cannot list {repo} at {revision} on {endpoint()}: {type(exc).__name__}: {exc}. "
            f"{_offline_hint(folder)}"
        ) from None
    out: dict[str, tuple[str | None, int | None]] = {}
    for entry in entries:
        path = getattr(entry, "path", None)
        if not isinstance(path, str) or not hasattr(entry, "size"):  # folders have no size
            continue
        if any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns):
            lfs = getattr(entry, "lfs", None)
            sha = getattr(lfs, "sha256", None) if lfs is not None else None
            size = getattr(entry, "size", None)
            out[path] = (sha if isinstance(sha, str) else None, size if isinstance(size, int) else None)
    return dict(sorted(out.items()))


def _unmatched(listed: Mapping[str, object], patterns: Sequence[str]) -> list[str]:
    return [p for p in patterns if not any(fnmatch.fnmatchcase(path, p) for path in listed)]


def fetch_snapshot(
    repo: str,
    revision: str,
    patterns: Sequence[str],
    *,
    folder: str,
    names: Mapping[str, str] | None = None,
) -> HubSnapshot:
    """Download the files of `repo` at `revision` that match `patterns` (or reuse a complete copy).

    Every pattern must match a file at that commit: one that matches none (a language the commit
    lacks) stops the download, named by `names` (pattern -> what the user asked for, e.g. `de
    (deu_Latn)`), before anything is fetched."""
    root = snapshot_root(folder, revision)
    cached = _cached(root, patterns)
    if cached is not None:
        return HubSnapshot(repo, revision, root, cached)
    from huggingface_hub import hf_hub_download

    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise HubDownloadError(
            f"{repo} is not in the cache ({root}) and HF_HUB_OFFLINE is set: {_offline_hint(folder)}"
        )
    _guard_hub_client()
    _probe(repo, revision, folder)
    listed = _listed(repo, revision, patterns, folder)
    if not listed:
        raise HubDownloadError(
            f"{repo} at {revision} on {endpoint()} has no file matching {', '.join(patterns)}; "
            "the repository's layout may have changed"
        )
    unmatched = _unmatched(listed, patterns)
    if unmatched:
        shown = names or {}
        wanted = "; ".join(f"{shown.get(p, p)}: no file {p}" for p in unmatched)
        raise HubDownloadError(
            f"{repo} at revision {revision} lacks what was asked for ({wanted}); nothing was "
            f"downloaded. Pin a revision that holds it in configs/hub_datasets.toml, or ask for less"
        )
    files: dict[str, str] = {}
    for rel, (expected, size) in listed.items():
        logger.info("downloading %s/%s @ %s", repo, rel, revision[:12])
        bound = allow_body(size + FILE_SLACK) if size is not None else nullcontext()
        try:
            with bound:
                local = hf_hub_download(
                    repo,
                    rel,
                    repo_type="dataset",
                    revision=revision,
                    local_dir=root,
                    endpoint=endpoint(),
                )
        except HubDownloadError as exc:
            raise HubDownloadError(f"cannot download {rel} of {repo} at {revision}: {exc}") from None
        except Exception as exc:  # any failure of the hub client
            raise HubDownloadError(
                f"cannot download {rel} of {repo} at {revision} from {endpoint()}: "
                f"{type(exc).__name__}: {exc}. {_offline_hint(folder)}"
            ) from None
        got = sha256_file(Path(local))
        if expected is not None and got != expected:
            Path(local).unlink(missing_ok=True)
            raise HubDownloadError(
                f"downloaded {rel} of {repo} has SHA-256 {got}, not the {expected} the hub lists for "
                f"{revision}; the file was deleted. Check {ENDPOINT_ENV} (now {endpoint()})"
            )
        files[rel] = got
    marker = {"repo": repo, "revision": revision, "patterns": list(patterns), "files": files}
    atomic_write_text(root / COMPLETE, json.dumps(marker, indent=1, sort_keys=True) + "\n")
    return HubSnapshot(repo, revision, root, files)
