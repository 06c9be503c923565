"""LLMBar (princeton-nlp/LLMBar) in its published layout: from a local copy, or downloaded and verified.

A local copy (`--data-dir`, the folder that holds `Dataset/`) is loaded as it is: a file whose SHA-256
differs from the published one only draws a warning, so users can study modified copies. Downloads go
to the user cache and are checked against the published sums pinned below; a file that does not match
is never saved. Without network access the download fails at once and says how to use a local copy.

The download base URL can be overridden with the environment variable JUDGEBENCH_LLMBAR_URL (a mirror,
or a test server): files are fetched from `<base>/Dataset/...`.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from judgebench.config.paths import cache_dir
from judgebench.data.catalog import DatasetRequest, Listing
from judgebench.data.dataset import Dataset, select_subset
from judgebench.data.generic_dataset import decode_bytes, parse_json
from judgebench.data.validate import build_items
from judgebench.errors import InputError, JudgebenchError
from judgebench.records import Item

if TYPE_CHECKING:  # httpx (0.1 s to import) loads when something is downloaded
    import httpx

logger = logging.getLogger(__name__)

PINNED_COMMIT = "900616bff90b6c6c8e1681f7d079250637c55992"
DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/princeton-nlp/LLMBar/{PINNED_COMMIT}"
URL_ENV = "JUDGEBENCH_LLMBAR_URL"
REPO_URL = "https://github.com/princeton-nlp/LLMBar"
# One attempt with a short connect timeout: offline, the user learns at once to pass --data-dir.
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0
MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024  # the largest published file is under 2 MB

# SHA-256 of the published `Dataset/<set>/dataset.json` at PINNED_COMMIT (facts about public files).
_PUBLISHED_BY_SET: dict[str, str] = {
    "CaseStudy/Base_10": "e36ae2461fd633c51afdbe19d9f62bc77089c7efc8a58e03fc273518a78ab1b0",
    "CaseStudy/Base_9": "b3989dcdaddb277207ab86631db2185edd15802e27b947a5dacb663895fddd69",
    "CaseStudy/Constraint": "8b702c755bdba59f63cf61e8643a5718799df8ed8f3b93b27dbf1db0e8c3c009",
    "CaseStudy/Negation": "c4ce566f652606d25445efedcb01d2a359c5ce03c6457e3c518a129dbd608c4e",
    "CaseStudy/Normal": "f6f2c4833d57ab8aaa8aa51bf521296b6f2e26323aad5c08da5331924af450ba",
    "LLMBar/Adversarial/GPTInst": "1002425f73c2cf54b6e6de99bce3f6c60fa2a17d13194772e37d7481c1351d42",
    "LLMBar/Adversarial/GPTOut": "1ff56e520d7607750a9866a3be0f5b850392ca4477a1f69d80f32bd3e310f561",
    "LLMBar/Adversarial/Manual": "0d9598769a39cdbbd265778c37e49939d41d5f76dcfb17bd75dcfa07516d3837",
    "LLMBar/Adversarial/Neighbor": "6712c7eda6342602e0bc7c06c282fa95e2110d4e741a284026a62d937f9780a0",
    "LLMBar/Natural": "f7127b7aa78104cb8e03a2b1b3ac0077e95b125714dd441a8ee63666145a3375",
    "Processed/FairEval": "5b4a129258c1efa273a1b10fec399f5462b458facf900e8e1948f4acb1b37dd6",
    "Processed/LLMEval^2": "deffdaeccda39c0fb9337c7e20925ec2b973bfd456832c2f1ba0e9ca4cf107de",
    "Processed/MT-Bench": "c152249bc095d152485954bd2abd9ea79528ee5e4c045bfe9ef78755b03c20d8",
}
PUBLISHED_SHA256: dict[str, str] = {
    f"Dataset/{name}/dataset.json": sha for name, sha in _PUBLISHED_BY_SET.items()
}

# The benchmark proper, in PROTOCOL order: subset name (the path form used everywhere) -> file.
LLMBAR_SUBSETS: dict[str, str] = {
    "Natural": "Dataset/LLMBar/Natural/dataset.json",
    "Adversarial/Neighbor": "Dataset/LLMBar/Adversarial/Neighbor/dataset.json",
    "Adversarial/GPTInst": "Dataset/LLMBar/Adversarial/GPTInst/dataset.json",
    "Adversarial/GPTOut": "Dataset/LLMBar/Adversarial/GPTOut/dataset.json",
    "Adversarial/Manual": "Dataset/LLMBar/Adversarial/Manual/dataset.json",
}
# The other pairwise sets of the repository, loaded as `llmbar:<name>`.
OTHER_SETS: dict[str, str] = {
    rel.removeprefix("Dataset/").removesuffix("/dataset.json"): rel
    for rel in sorted(PUBLISHED_SHA256)
    if not rel.startswith("Dataset/LLMBar/")
}


class DatasetDownloadError(JudgebenchError):
    """A dataset could not be fetched or did not match its published checksum."""


class LLMBarChecksumWarning(UserWarning):
    """A local LLMBar file differs from the published one; it is used as it is."""


@dataclass(frozen=True)
class LLMBarFile:
    """One dataset.json to load: the subset name its items get and its path under the root."""

    subset: str
    rel: str


def base_url() -> str:
    """Where downloads come from: JUDGEBENCH_LLMBAR_URL, else the pinned commit on GitHub."""
    return (os.environ.get(URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def cache_root() -> Path:
    """The download cache, laid out like the repository (`<cache>/llmbar/Dataset/...`)."""
    return cache_dir() / "llmbar"


def llmbar_root(data_dir: str | Path | None) -> Path:
    """The folder that holds `Dataset/`: the local copy given, or the download cache when None.

    Accepts the `Dataset/` folder itself too. Used to find `Dataset/LLMBar/**/evaluators/NAME/result.json`.
    """
    if data_dir is None:
        return cache_root()
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise InputError(
            "no such folder: --data-dir is the folder that holds LLMBar's Dataset/", path=str(data_dir)
        )
    if (root / "Dataset").is_dir():
        return root
    if root.name == "Dataset" and any(
        (root / part).is_dir() for part in ("LLMBar", "CaseStudy", "Processed")
    ):
        return root.parent
    inside = root.resolve()  # e.g. .../Dataset/LLMBar: the folder to pass is the one above Dataset/
    above = next((p for p in inside.parents if p.name == "Dataset" and p.is_dir()), None)
    above = above.parent if above is not None else None
    hint = f"pass --data-dir {above}, " if above is not None else ""
    raise InputError(
        f"holds no Dataset/ folder: {hint}the folder that holds LLMBar's Dataset/ (a clone of {REPO_URL})",
        path=str(data_dir),
    )


def resolve_set(name: str | None) -> list[LLMBarFile]:
    """Files for `llmbar` (None) or `llmbar:NAME`: a CaseStudy/Processed set or LLMBar subset(s)."""
    if name is None or name.strip() in ("", "LLMBar"):
        return [LLMBarFile(subset, rel) for subset, rel in LLMBAR_SUBSETS.items()]
    wanted = name.strip().strip("/").removeprefix("LLMBar/")
    for other, rel in OTHER_SETS.items():
        if other.lower() == wanted.lower():
            return [LLMBarFile(other, rel)]
    picked = [
        LLMBarFile(subset, rel)
        for subset, rel in LLMBAR_SUBSETS.items()
        if subset.lower() == wanted.lower() or subset.lower().startswith(wanted.lower() + "/")
    ]
    if picked:
        return picked
    names = [*LLMBAR_SUBSETS, "Adversarial", *OTHER_SETS]
    close = difflib.get_close_matches(wanted, names, n=1)
    hint = f" (did you mean llmbar:{close[0]}?)" if close else ""
    raise InputError(f"unknown LLMBar set 'llmbar:{name}'{hint}; known: {', '.join(names)}")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    """Temp file in the same folder, fsync, rename: a crash never leaves a half file in the cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _offline_hint() -> str:
    return (
        "judgebench downloads LLMBar on first use; without network access, pass --data-dir DIR "
        f"pointing at a local copy (the folder that holds Dataset/, e.g. a clone of {REPO_URL})"
    )


def _download(client: httpx.Client, url: str, rel: str) -> bytes:
    """One attempt: any transport failure is reported at once, with the way out."""
    import httpx  # loaded by fetch

    try:
        with client.stream("GET", url) as response:
            if response.status_code != 200:
                raise DatasetDownloadError(
                    f"cannot download {rel}: {url} answered HTTP {response.status_code}. {_offline_hint()}"
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise DatasetDownloadError(
                        f"cannot download {rel}: {url} sent more than {MAX_DOWNLOAD_BYTES:,} bytes"
                    )
                chunks.append(chunk)
    except httpx.TimeoutException as exc:
        raise DatasetDownloadError(
            f"cannot download {rel} from {url}: timed out ({type(exc).__name__}). {_offline_hint()}"
        ) from None
    except httpx.HTTPError as exc:
        raise DatasetDownloadError(
            f"cannot download {rel} from {url}: {type(exc).__name__}: {exc}. {_offline_hint()}"
        ) from None
    return b"".join(chunks)


def fetch(rels: list[str]) -> Path:
    """Make sure the cache holds verified copies of `rels`, downloading what is missing or corrupt."""
    import httpx  # lazily: 0.1 s to import, and only a download needs it

    root = cache_root()
    todo = []
    for rel in rels:
        path = root / rel
        if path.is_file():
            if sha256_bytes(path.read_bytes()) == PUBLISHED_SHA256[rel]:
                continue
            logger.warning("cached %s does not match its published checksum; downloading it again", path)
        todo.append(rel)
    if not todo:
        return root
    base = base_url()
    timeout = httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        for rel in todo:
            url = f"{base}/{quote(rel)}"
            logger.info("downloading %s", url)
            data = _download(client, url, rel)
            got = sha256_bytes(data)
            if got != PUBLISHED_SHA256[rel]:
                raise DatasetDownloadError(
                    f"downloaded {rel} from {url} has SHA-256 {got}, not the published "
                    f"{PUBLISHED_SHA256[rel]}; nothing was saved. Check {URL_ENV} (now {base}) or pass "
                    "--data-dir with a local copy"
                )
            _write_atomic(root / rel, data)
    return root


def _check_local(root: Path, sums: dict[str, str]) -> None:
    """Warn (do not refuse) when local files are not the published ones: one warning for the whole
    copy, so that a copy edited throughout is one line on the terminal, not one per file."""
    differ = [(rel, got) for rel, got in sums.items() if PUBLISHED_SHA256.get(rel) not in (None, got)]
    if len(differ) == 1:
        rel, got = differ[0]
        message = (
            f"{root / rel}: SHA-256 {got[:16]}... differs from the published LLMBar file "
            f"({PUBLISHED_SHA256[rel][:16]}...); loading this copy as it is"
        )
    elif differ:
        shown = ", ".join(rel for rel, _ in differ[:3]) + (", ..." if len(differ) > 3 else "")
        message = (
            f"{root}: {len(differ)} of {len(sums)} files differ from the published LLMBar file "
            f"(SHA-256: {shown}); loading this copy as it is"
        )
    else:
        return
    warnings.warn(LLMBarChecksumWarning(message), stacklevel=4)


def _ids_under(subset: str) -> Callable[[int], str]:
    return lambda index: f"{subset}/{index}"


def load_llmbar(
    name: str | None = None, *, data_dir: str | Path | None = None
) -> tuple[list[Item], str, dict[str, str]]:
    """Items of `llmbar` / `llmbar:NAME`, the source (folder or URL) and {file: sha256} as read.

    Ids are `<subset>/<index>` (`Natural/0`, `Adversarial/Neighbor/17`, `CaseStudy/Constraint/3`).
    """
    files = resolve_set(name)
    if data_dir is not None:
        root = llmbar_root(data_dir)
        source = str(root.resolve())
        for file in files:
            if not (root / file.rel).is_file():
                raise InputError(
                    f"missing from the local LLMBar copy (expected {file.rel} under {root})",
                    path=str(root / file.rel),
                )
    else:
        root = fetch([file.rel for file in files])
        source = base_url()
    raws: dict[str, bytes] = {}
    for file in files:
        shown = str(root / file.rel)
        try:
            raws[shown] = (root / file.rel).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the file ({exc.strerror or exc})", path=shown) from None
    sums = {shown: sha256_bytes(raw) for shown, raw in raws.items()}
    if data_dir is not None:  # before parsing: a file that fails to parse is named after the warning
        _check_local(root, {file.rel: sums[str(root / file.rel)] for file in files})
    items: list[Item] = []
    for file in files:
        shown = str(root / file.rel)
        records = parse_json(decode_bytes(raws[shown], shown), shown)
        items.extend(
            build_items(
                records,
                path=shown,
                default_id=_ids_under(file.subset),
                mapping={"instruction": "input"},
                default_subset=file.subset,
                ignore=("id", "subset"),
                allow_empty_outputs=True,  # Processed/LLMEval^2 item 169 has a blank output_2
            )
        )
    return items, source, sums


# --- the registered family (data/catalog.py) -------------------------------------------------------


def load_family(request: DatasetRequest) -> Dataset:
    """`llmbar` (its five subsets) or `llmbar:SET`."""
    items, source, files = load_llmbar(request.suffix, data_dir=request.data_dir)
    if request.subset is not None:
        items = select_subset(items, request.subset, shown=request.spec)
    return Dataset(spec=request.spec, items=items, source=source, subset=request.subset, files=files)


def listing(name: str, data_dir: str | None) -> list[Listing]:
    """`llmbar` and its other sets: in the local copy (or the download cache), or not."""
    where = "local copy" if data_dir is not None else "download cache"
    absent = "missing" if data_dir is not None else "downloads on use"
    try:
        root: Path | None = llmbar_root(data_dir)
    except InputError:  # a --data-dir of hub snapshots only: LLMBar is simply missing there
        root = None

    def held(rel: str) -> bool:
        return root is not None and (root / rel).is_file()

    have = all(held(rel) for rel in LLMBAR_SUBSETS.values())
    rows = [Listing(name, "LLMBar: 5 subsets", where if have else absent)]
    rows += [
        Listing(f"{name}:{other}", "other LLMBar set", where if held(rel) else absent)
        for other, rel in OTHER_SETS.items()
    ]
    return rows
