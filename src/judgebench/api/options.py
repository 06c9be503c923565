"""How a command reaches its models: the flags every model command shares, built once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from judgebench.api.requests import build_request
from judgebench.errors import ProviderConfigError
from judgebench.models import SettingsOverrides, build_client
from judgebench.models.client import ModelClient
from judgebench.models.config import resolve_judge_full
from judgebench.models.pricing import PriceTable
from judgebench.models.registry import provider_class


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
    # the stored answer is cut to this many characters (None: judges.toml, else 65536)
    max_answer_chars: int | None = None
    # another process writing the same stage of the run: wait for it (False: refuse at once)
    wait_lock: bool = False

    def __post_init__(self) -> None:
        """Every value checked (finite, in range) when the options are built, before anything runs."""
        fields = {name: getattr(self, name) for name in SettingsOverrides.model_fields}
        flags = {name: f"--{name.replace('_', '-')}" for name in fields}
        build_request(SettingsOverrides, None, fields, flags=flags)

    def overrides(self) -> SettingsOverrides:
        """The provider settings these flags set (a flag given here wins over judges.toml)."""
        return SettingsOverrides.model_validate(self, from_attributes=True)

    def client(self, name_or_spec: str, prices: PriceTable | None = None) -> ModelClient:
        """A client for a spec or configured judge name."""
        return build_client(name_or_spec, self.overrides(), use_cache=self.use_cache, prices=prices)


def require_keys(names: Iterable[str]) -> None:
    """Each model (spec or judges.toml name) that is about to be called has its API key: checked
    before a run folder is touched or a question asked, naming the variable to set."""
    for name in dict.fromkeys(names):
        missing = provider_class(resolve_judge_full(name).spec.provider).key_missing()
        if missing:
            raise ProviderConfigError(f"{name}: {missing} (nothing was called; --dry-run needs no key)")
