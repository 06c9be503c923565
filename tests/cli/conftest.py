"""The CLI tests share fixtures with the library tests of the rooms they drive."""

from __future__ import annotations

from tests.data.conftest import closed_port_url, isolated_cache, serve_llmbar  # noqa: F401
from tests.report.conftest import flagged, judgments  # noqa: F401
