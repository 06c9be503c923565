"""Errors a user can act on: every one says what file, line, item or setting is wrong."""

from __future__ import annotations


class JudgebenchError(Exception):
    """Base class: the CLI prints the message on one line and exits non-zero (cli/exits.py)."""


class InputError(JudgebenchError):
    """Bad input: a dataset, variants, template or config file that cannot be used as it is."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        item: str | None = None,
        field: str | None = None,
        row: int | None = None,
    ) -> None:
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if row is not None:  # a table's row (parquet), 1-based
            where.append(f"row {row}")
        if item is not None:
            where.append(f"item {item}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ": ".join([", ".join(where)]) if where else ""
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.path = path
        self.line = line
        self.row = row
        self.item = item
        self.field = field
        self.reason = message


class ConfigError(JudgebenchError):
    """A setting, flag or model spec that cannot work."""


class ConfigFileError(InputError, ConfigError):
    """A configuration file (configs/*.toml, a probe, template, judges or prices file a user hands in)
    that cannot be used. One style for every such file: `FILE, line N, key 'TABLE.KEY': what is wrong`
    (the line where it is known). An InputError and a ConfigError both, so every caller that caught
    either before still catches it."""

    def __init__(self, message: str, *, path: str, key: str | None = None, line: int | None = None) -> None:
        where = [path, *([f"line {line}"] if line is not None else []), *([f"key '{key}'"] if key else [])]
        JudgebenchError.__init__(self, f"{', '.join(where)}: {message}")
        self.path = path
        self.line = line
        self.row = None
        self.item = None
        self.field = key
        self.key = key
        self.reason = message


class RunDirError(JudgebenchError):
    """The run directory is missing a stage, belongs to another run, or escapes its folder."""


class ProviderConfigError(JudgebenchError):
    """A provider cannot be used: missing key, missing optional SDK, unsupported option."""
