"""Flags shared by several commands, declared once, and the library options they build."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from judgebench.cli.app import err_console
from judgebench.config import defaults
from judgebench.data.catalog import spec_names
from judgebench.errors import ConfigError

if TYPE_CHECKING:
    from judgebench import api

# what --dataset takes, made from the dataset registry (data/catalog.py), never listed by hand
DATASETS = spec_names()


def probes_help(lead: str) -> str:
    """`--probes`' help with the probes declared now. Typer evaluates a command module's annotations
    (`from __future__ import annotations`) each time it builds the command, so this runs then."""
    from judgebench.probes.probe_registry import probes_help as declared

    return declared(lead)


RunOpt = Annotated[str, typer.Option("--run", help="Run folder that holds every stage's files.")]
DataDirOpt = Annotated[
    str | None,
    typer.Option(
        "--data-dir",
        help="Local copy instead of a download: LLMBar's folder (it holds Dataset/), or for a hub dataset "
        "(configs/hub_datasets.toml) the folder of hub snapshots, each in the hub's layout.",
    ),
]
SkipBadRowsOpt = Annotated[
    bool,
    typer.Option(
        "--skip-bad-rows",
        help="Hub datasets: leave out (and count) rows whose prompt, chosen or rejected "
        "text is null or empty, instead of stopping at the first.",
    ),
]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N items.")]
SubsetOpt = Annotated[str | None, typer.Option("--subset", help="Only this subset (and those below it).")]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        help="Stop scheduling paid calls before the run has paid this many USD (earlier commands count).",
    ),
]
UntilSettledOpt = Annotated[
    bool,
    typer.Option(
        "--until-settled",
        help="Judge whole items in seeded rounds; stop a judge once anytime-valid bounds decide it.",
    ),
]
RoundItemsOpt = Annotated[
    int, typer.Option("--round-items", min=1, help="Items per round of --until-settled (a batch each).")
]
# The Study's flags (api/study.py), one declaration each: a command states only its default.
ModelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="Judge: PROVIDER:MODEL or a judges.toml name; repeat for several. Where the command "
        f"does not require it, {defaults.MODEL} (the embedded offline model).",
    ),
]
ConditionsOpt = Annotated[
    str | None,
    typer.Option(
        "--conditions",
        help="Comma-separated conditions of configs/conditions.toml; en is the source (judge's "
        "default: en plus every condition the run translated).",
    ),
]
TemplateOpt = Annotated[
    str | None, typer.Option("--template", help="Judge template TOML (with answer format).")
]

# Options shared by every command that calls a model (INTERFACE.md). Unset flags are None: a
# judge's own settings in configs/judges.toml, then the defaults, apply.
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="Override the provider endpoint.")]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout", min=0.1, help=f"Per-request timeout in seconds. \\[default: {defaults.TIMEOUT_S:g}]"
    ),
]
MaxRetriesOpt = Annotated[
    int | None,
    typer.Option(
        "--max-retries",
        min=0,
        help="Retries after the first attempt on 429/5xx/timeouts/malformed bodies; 0 = none. "
        f"\\[default: {defaults.MAX_RETRIES}]",
    ),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency", min=1, help=f"Concurrent requests per judge. \\[default: {defaults.CONCURRENCY}]"
    ),
]
RpmOpt = Annotated[
    float | None, typer.Option("--rpm", min=0.001, help="Requests-per-minute limit per judge.")
]
TpmOpt = Annotated[float | None, typer.Option("--tpm", min=1, help="Tokens-per-minute limit per judge.")]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Bypass the response cache (answers are still stored).")
]
WaitLockOpt = Annotated[
    bool,
    typer.Option(
        "--wait-lock",
        help="If another process is writing this stage of the run, wait for it (default: refuse).",
    ),
]
MaxAnswerCharsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-answer-chars",
        min=1,
        help=f"Cut each stored answer to N characters. \\[default: {defaults.MAX_ANSWER_CHARS}]",
    ),
]
BatchOpt = Annotated[
    bool, typer.Option("--batch", help="Send the calls through the provider's Batch API and wait.")
]
PollIntervalOpt = Annotated[float, typer.Option("--poll-interval", help="Seconds between batch polls.")]


# The shared model flags, by the parameter names the commands give them (cli/shared_options.py's *Opt types):
# the provider settings (one SettingsOverrides field each), then the two about the command itself.
SETTING_FLAGS = ("base_url", "timeout", "max_retries", "concurrency", "rpm", "tpm", "max_answer_chars")
CALL_FLAGS = (*SETTING_FLAGS, "wait_lock", "no_cache")


def call_options_from(params: Mapping[str, Any]) -> api.CallOptions:
    """CallOptions from a command's parameters (pass `locals()` first thing it builds them): the shared
    model flags the command declares, picked by name, so a command lists its flags once, in its
    signature, and none is forgotten on the way to the library. The provider settings become one
    `SettingsOverrides`, built and validated here (a bad value names its flag) and carried as it is
    down to the provider; --no-cache is the one spelled the other way round."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    given = {name: params[name] for name in SETTING_FLAGS if name in params}
    flags = {name: "--" + name.replace("_", "-") for name in SETTING_FLAGS}
    settings = api.build_request(api.SettingsOverrides, None, given, flags=flags)
    return api.CallOptions(
        settings=settings,
        use_cache=not params.get("no_cache", False),
        wait_lock=bool(params.get("wait_lock", False)),
    )


def conditions_of(value: str | None, *, run: str | None = None) -> list[str] | None:
    """A `--conditions` value read by the library's one parser; its error names the run, if any."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    try:
        return api.parse_conditions(value)
    except ConfigError as exc:
        raise ConfigError(f"run {run}: {exc}" if run else str(exc)) from None


def _log(message: str) -> None:
    err_console.print(message, highlight=False, soft_wrap=True)


def execution(
    *,
    batch: bool = False,
    poll_interval: float = defaults.POLL_INTERVAL_S,
    batch_failed: str = "resubmit",
    reask: int = 0,
    write_batch: Path | None = None,
    import_batch: Path | None = None,
) -> api.Execution:
    """How the calls are made; --batch, --write-batch and --import-batch exclude each other."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    if sum([batch, write_batch is not None, import_batch is not None]) > 1:
        raise ConfigError("--batch, --write-batch and --import-batch exclude each other")
    if batch_failed not in ("resubmit", "live"):
        raise ConfigError("--batch-failed: resubmit or live")
    return api.Execution(
        batch=batch,
        poll_interval=poll_interval,
        batch_failed="live" if batch_failed == "live" else "resubmit",
        reask=reask,
        write_requests=write_batch,
        import_file=import_batch,
        log=_log,
    )
