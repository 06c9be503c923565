"""Datasets of pairwise items: a registry of dataset families (catalog.py: LLMBar, the bundled
sample, the hub tables of configs/hub_datasets.toml, plugins of the group `judgebench.datasets`) and
the user's own JSONL / JSON / CSV files, all validated into `records.Item` with precise errors."""

from __future__ import annotations

from judgebench.data.catalog import DatasetFamily, DatasetRequest, Listing, families, spec_help
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
from judgebench.data.generic import load_file
from judgebench.data.llmbar import (
    LLMBAR_SUBSETS,
    OTHER_SETS,
    PUBLISHED_SHA256,
    DatasetDownloadError,
    LLMBarChecksumWarning,
    llmbar_root,
)
from judgebench.data.validate import MAX_FIELD_BYTES, parse_label

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
