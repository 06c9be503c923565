"""Run folders written by earlier releases, read and reported by this one."""

from __future__ import annotations

import math


def same_numbers(new: dict[str, object], old: dict[str, object]) -> bool:
    """`new` holds every field of `old` with the same value, floats to 12 significant digits: the
    analysis sums in one order (issue 42 dropped the second, bit-exact path), so a mean may differ
    in its last bit from the one a release wrote."""
    for key, was in old.items():
        now = new.get(key)
        if isinstance(was, float) and isinstance(now, float):
            if not math.isclose(now, was, rel_tol=1e-12, abs_tol=1e-15):
                return False
        elif now != was:
            return False
    return True
