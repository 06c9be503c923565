"""Datasets of pairwise items: a registry of dataset families (catalog.py: LLMBar, the bundled
sample, the hub tables of configs/hub_datasets.toml, plugins of the group `judgebench.datasets`) and
the user's own JSONL / JSON / CSV files, all validated into `records.Item` with precise errors."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The registry loads with the package (stdlib only): the CLI's help is made from it without pydantic.
from judgebench.data.catalog import DatasetFamily, DatasetRequest, Listing, families, spec_help

if TYPE_CHECKING:
    from judgebench.data.dataset import (
        LLMBAR_SPEC,
        SAMPLE_SPEC,
        Dataset,
        items_checksum,
        load_dataset,
        sample_path,
        sample_variants_path,
        select_subset,
    )
    from judgebench.data.generic_dataset import load_file
    from judgebench.data.llmbar import (
        LLMBAR_SUBSETS,
        OTHER_SETS,
        PUBLISHED_SHA256,
        DatasetDownloadError,
        LLMBarChecksumWarning,
        llmbar_root,
    )
    from judgebench.data.validate import MAX_FIELD_BYTES, parse_label

# name -> the module that holds it, imported on first use (the record models load with it)
_HOME = {
    **dict.fromkeys(
        (
            "LLMBAR_SPEC",
            "SAMPLE_SPEC",
            "Dataset",
            "items_checksum",
            "load_dataset",
            "sample_path",
            "sample_variants_path",
            "select_subset",
        ),
        "dataset",
    ),
    "load_file": "generic_dataset",
    **dict.fromkeys(
        (
            "LLMBAR_SUBSETS",
            "OTHER_SETS",
            "PUBLISHED_SHA256",
            "DatasetDownloadError",
            "LLMBarChecksumWarning",
            "llmbar_root",
        ),
        "llmbar",
    ),
    "MAX_FIELD_BYTES": "validate",
    "parse_label": "validate",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'judgebench.data' has no attribute {name!r}")
    return getattr(importlib.import_module(f"judgebench.data.{home}"), name)


__all__ = [
    "LLMBAR_SPEC",
    "LLMBAR_SUBSETS",
    "MAX_FIELD_BYTES",
    "OTHER_SETS",
    "PUBLISHED_SHA256",
    "SAMPLE_SPEC",
    "Dataset",
    "DatasetDownloadError",
    "DatasetFamily",
    "DatasetRequest",
    "LLMBarChecksumWarning",
    "Listing",
    "families",
    "items_checksum",
    "llmbar_root",
    "load_dataset",
    "load_file",
    "parse_label",
    "sample_path",
    "sample_variants_path",
    "select_subset",
    "spec_help",
]
