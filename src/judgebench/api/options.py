"""How a command reaches its models: the flags every model command shares, built once, and the
command's judges, resolved once from them and the config files."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from judgebench.api.stage_requests import build_request
from judgebench.errors import ProviderConfigError
from judgebench.models import Judges, JudgeSpec, SettingsOverrides, build_client
from judgebench.models.client import ModelClient


@dataclass(frozen=True)
class CallOptions:
    """How one command calls its models: the provider settings its flags set (`settings`, one
    `SettingsOverrides`: a field left None keeps the judge's judges.toml value, else the default),
    the response cache, progress and the run lock.

    A command builds one; its `judges()` reads configs/judges.toml and configs/prices.toml on first
    use and then resolves every `--model` value of the command from what it read."""

    settings: SettingsOverrides = dataclasses.field(default_factory=SettingsOverrides)
    use_cache: bool = True
    progress: bool | None = None  # None: only on a terminal
    # another process writing the same stage of the run: wait for it (False: refuse at once)
    wait_lock: bool = False
    # this command's judges, read on first use (`judges()`)
    _judges: Judges | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """The settings are one typed `SettingsOverrides` (validated, finite, in range when it was
        built); a plain mapping is validated here, a bad value naming its flag, before anything runs."""
        if isinstance(self.settings, SettingsOverrides):
            return
        if not isinstance(self.settings, Mapping):
            raise TypeError(f"CallOptions.settings: a SettingsOverrides, not {type(self.settings).__name__}")
        flags = {name: f"--{name.replace('_', '-')}" for name in SettingsOverrides.model_fields}
        object.__setattr__(
            self, "settings", build_request(SettingsOverrides, None, dict(self.settings), flags=flags)
        )

    def judges(self) -> Judges:
        """The command's judges: the config files read once, these flags on top."""
        if self._judges is None:
            object.__setattr__(self, "_judges", Judges.load(self.settings))
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
