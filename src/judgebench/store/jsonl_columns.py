"""A JSONL file read as columns by pyarrow: in pieces of whole lines, each line's byte offset kept.

Why: at a million lines, a Python pass over the file (json.loads, or a pydantic model per line) is
most of a reader's time and memory; pyarrow parses a piece on every core without holding the GIL.
The pieces are checked line for line against the exact reader's idea of a line (no blank line, no
CR, one record a line); anything else raises `Fallback`, and the caller reads the file the exact way
(`run_folder.read_jsonl`, which salvages torn lines and names a bad one). The offsets let a caller read
back whole records of just the lines it needs, by seeking.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pydantic import BaseModel, ValidationError

_BLOCK = 16 << 20  # pyarrow's block: the unit one thread parses
_PIECE = 32 << 20  # bytes of JSON parsed at once (its whole records are then dropped)

M = TypeVar("M", bound=BaseModel)


class Fallback(Exception):
    """The fast path cannot vouch for this file: read it the exact way."""


def _pieces(fh: BinaryIO, size: int) -> Iterator[tuple[memoryview, int]]:
    """The first `size` bytes of `fh` in pieces of whole lines (about _PIECE bytes each, longer where
    one line is), each with its byte offset: the file is read once, into memory a piece at a time."""
    fh.seek(0)
    held, offset, left = b"", 0, size
    while left > 0 or held:
        chunk = fh.read(min(_PIECE, left)) if left > 0 else b""
        left -= len(chunk)
        if left > 0 and not chunk:
            left = 0  # the file shrank under us: what was read is all there is
        data = held + chunk if held else chunk
        cut = data.rfind(b"\n") + 1 if left > 0 else len(data)
        if cut == 0:  # one line longer than a piece: read on until it ends
            held = data
            continue
        if data.find(b"\r", 0, cut) >= 0:
            raise Fallback  # CR: the exact reader's line splitting, not ours (memchr, not a numpy pass)
        yield memoryview(data)[:cut], offset
        held, offset = data[cut:], offset + cut


def line_starts(piece: memoryview) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Where each non-empty line of `piece` starts, plus its end: the exact reader's lines (newlines,
    and an unterminated last line). A blank line sends the file to the exact reader (a CR did in
    `_pieces`)."""
    data = np.frombuffer(piece, dtype=np.uint8)
    ends = np.flatnonzero(data == 10)
    if len(ends) and (ends[0] == 0 or bool(np.any(np.diff(ends) == 1))):
        raise Fallback  # blank lines: let the exact reader decide what they hold
    starts = np.concatenate([[0], ends + 1]).astype(np.int64)
    return starts if starts[-1] == len(data) else np.append(starts, len(data))


def parse_pieces(
    fh: BinaryIO, size: int, schema: pa.Schema
) -> Iterator[tuple[pa.Table, np.ndarray[Any, Any]]]:
    """Each piece of the file parsed by pyarrow on every core, checked line for line (as many rows as
    lines), with the byte offset of each of its lines."""
    opts = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    read = pa_json.ReadOptions(block_size=_BLOCK, use_threads=True)
    for piece, offset in _pieces(fh, size):
        starts = line_starts(piece)
        table = pa_json.read_json(pa.BufferReader(pa.py_buffer(piece)), read_options=read, parse_options=opts)
        if table.num_rows != len(starts) - 1:  # two records on one line, or a whitespace-only line
            raise Fallback
        yield table, starts[:-1] + offset


def selected_records(path: Path, model: type[M], key: str, wanted: Collection[str]) -> list[M] | None:
    """The records of `path` whose `key` field is in `wanted`, in file order (every line of them: a
    caller takes the last per key), by reading only the `key` column of the whole file and then just
    those lines; None when the fast path cannot vouch for the file (read it the exact way)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            schema = pa.schema([(key, pa.string())])
            parts = list(parse_pieces(fh, size, schema))
            if not parts:
                return []
            keys = pa.concat_arrays([p.column(key).combine_chunks() for p, _ in parts])
            offsets = np.concatenate([o for _, o in parts])
            if keys.null_count:
                return None
            lines = np.flatnonzero(
                np.asarray(pc.is_in(keys, value_set=pa.array(sorted(wanted), pa.string())))
            )
            out = []
            for at in offsets[lines].tolist():
                fh.seek(at)
                out.append(model.model_validate_json(fh.readline()))
            return out
    except (Fallback, pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, ValidationError, OSError):
        return None
