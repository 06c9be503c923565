"""Fixtures for the provider tests: a toy provider registered for one test and removed after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from judgebench.models import register, unregister
from tests.models.toy_provider import ToyProvider


@pytest.fixture
def toy() -> Iterator[type[ToyProvider]]:
    """`toy:MODEL` specs reach ToyProvider while the test runs; its request log starts empty."""
    register("toy", "tests.models.toy_provider:ToyProvider")
    ToyProvider.sent.clear()
    try:
        yield ToyProvider
    finally:
        unregister("toy")
        ToyProvider.sent.clear()
