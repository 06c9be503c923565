"""How a command reaches its models: the flags every model command shares, built once, and the
command's judges, resolved once from them and the config files."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from judgebench.api.requests import build_request
from judgebench.errors import ProviderConfigError
from judgebench.models import Judges, JudgeSpec, SettingsOverrides, build_client
from judgebench.models.client import ModelClient


@dataclass(frozen=True)
class CallOptions:
    """How to reach and pace the models of one command (flags shared by every model command).

    A command builds one; its `judges()` reads configs/judges.toml and configs/prices.toml on first
    use and then resolves every `--model` value of the command from what it read."""

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
    # this command's judges, read on first use (`judges()`)
    _judges: Judges | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Every value checked (finite, in range) when the options are built, before anything runs."""
        fields = {name: getattr(self, name) for name in SettingsOverrides.model_fields}
        flags = {name: f"--{name.replace('_', '-')}" for name in fields}
        build_request(SettingsOverrides, None, fields, flags=flags)

    def overrides(self) -> SettingsOverrides:
        """The provider settings these flags set (a flag given here wins over judges.toml)."""
        return SettingsOverrides.model_validate(self, from_attributes=True)

    def judges(self) -> Judges:
        """The command's judges: the config files read once, these flags on top."""
        if self._judges is None:
            object.__setattr__(self, "_judges", Judges.load(self.overrides()))
        assert self._judges is not None
        return self._judges

    def resolve(self, name_or_spec: str) -> JudgeSpec:
        """One `--model` value as this command's resolved judge."""
        return self.judges().resolve(name_or_spec)

    def without_cache(self) -> CallOptions:
        """The same options and judges with the response cache off (re-asks that must be fresh)."""
        fresh = dataclasses.replace(self, use_cache=False)
        object.__setattr__(fresh, "_judges", self._judges)
        return fresh

    def client(self, judge: JudgeSpec | str) -> ModelClient:
        """A client for a resolved judge (or a `--model` value, resolved here), priced from the
        command's price table."""
        spec = self.resolve(judge) if isinstance(judge, str) else judge
        return build_client(spec, use_cache=self.use_cache, prices=self.judges().prices)


def require_keys(judges: Iterable[JudgeSpec]) -> None:
    """Each judge that is about to be called has its API key: checked before a run folder is
    touched or a question asked, naming the variable to set."""
    for judge in {j.name: j for j in judges}.values():
        missing = judge.key_missing()
        if missing:
            raise ProviderConfigError(f"{judge.name}: {missing} (nothing was called; --dry-run needs no key)")
