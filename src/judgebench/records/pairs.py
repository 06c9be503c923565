"""Composite names of metric records, typed: a pair of conditions (`en->zh`) and a pair of judges
(`J1 vs J2`). The files keep the joined strings INTERFACE.md gives them (`str()` writes them,
`parse()` reads them back); code builds and takes them apart only through these two types."""

from __future__ import annotations

from typing import NamedTuple

PAIR_SEP = "->"  # joins two conditions: `en->zh`
VS = " vs "  # joins two judges: `J1 vs J2`


class ConditionPair(NamedTuple):
    """Two conditions a flip, McNemar or increase record compares: `en->zh` in metrics.json."""

    first: str
    second: str

    def __str__(self) -> str:
        return f"{self.first}{PAIR_SEP}{self.second}"

    @classmethod
    def parse(cls, text: str) -> ConditionPair | None:
        """The pair a record's condition names, or None for a single condition (`zh`)."""
        first, sep, second = text.partition(PAIR_SEP)
        return cls(first, second) if sep else None


class JudgePair(NamedTuple):
    """Two judges a judge-vs-judge record compares: `J1 vs J2` in metrics.json's judge field."""

    first: str
    second: str

    def __str__(self) -> str:
        return f"{self.first}{VS}{self.second}"

    @classmethod
    def parse(cls, text: str) -> JudgePair | None:
        """The pair a record's judge names, or None for one judge's record."""
        first, sep, second = text.partition(VS)
        return cls(first, second) if sep else None
