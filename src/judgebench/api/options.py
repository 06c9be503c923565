"""How a command reaches its models: the flags every model command shares, built once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgebench.models.base import ProviderSettings
from judgebench.models.client import ModelClient
from judgebench.models.config import resolve_judge_full
from judgebench.models.pricing import PriceTable


@dataclass(frozen=True)
class CallOptions:
    """How to reach and pace the models of one command (flags shared by every model command)."""

    base_url: str | None = None
    # None: the judge's settings in configs/judges.toml, else the ProviderSettings defaults
    timeout: float | None = None
    max_retries: int | None = None
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    use_cache: bool = True
    progress: bool | None = None  # None: only on a terminal
    backoff_initial: float | None = None
    backoff_max: float | None = None

    def client(self, name_or_spec: str, prices: PriceTable | None = None) -> ModelClient:
        """A client for a spec or configured judge name; a flag given here wins over judges.toml."""
        spec, settings, name, _ = resolve_judge_full(name_or_spec)
        updates: dict[str, Any] = {}
        if self.base_url:
            updates["base_url"] = self.base_url
        for key in ("timeout", "max_retries", "concurrency", "rpm", "tpm", "backoff_initial", "backoff_max"):
            value = getattr(self, key)
            if value is not None:
                updates[key] = value
        merged = ProviderSettings.model_validate({**settings.model_dump(), **updates})
        return ModelClient(spec, merged, use_cache=self.use_cache, prices=prices, name=name)
