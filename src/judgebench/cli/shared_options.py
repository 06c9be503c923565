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


# Each flag used by more than one command is declared here once: its name, placeholder and limits
# in one `typer.Option(...)` (a function where commands word its help differently), its type in the
# aliases below; a command states only its default (Typer reads defaults from the signature).
# tests/cli/test_shared_options.py fails when a flag of two commands is declared twice.


# --- the run and its data ---------------------------------------------------------------------------
def _run(help: str) -> Any:
    return typer.Option("--run", metavar="DIR", help=help)


RunOpt = Annotated[str, _run("Run folder that holds every stage's files.")]
NewRunOpt = Annotated[str | None, _run("Run folder (default: a new one under ./runs/).")]
SelftestRunOpt = Annotated[str | None, _run("Keep the self-test's run folder here.")]
BBERunOpt = Annotated[str | None, _run("Judge-LS run folder (judgments.jsonl).")]
JudgedRunOpt = Annotated[str, _run("The judged run folder.")]


def _dataset(help: str) -> Any:
    return typer.Option("--dataset", metavar="SPEC", help=help.format(datasets=DATASETS))


DatasetOpt = Annotated[str | None, _dataset("Dataset: {datasets}.")]
RunDatasetOpt = Annotated[str, _dataset("Dataset: {datasets}. A dataset's own languages need no translator.")]
JudgeDatasetOpt = Annotated[
    str | None,
    _dataset(
        "Dataset for a run with no translate stage ({datasets}): judged in en only; with "
        "--dry-run and --conditions en,zh,ls, judging is priced before anything is translated."
    ),
]
PerturbDatasetOpt = Annotated[str | None, _dataset("Dataset for --perturb (default: the run's): {datasets}.")]


def _data_dir(help: str) -> Any:
    return typer.Option("--data-dir", metavar="DIR", help=help)


DataDirOpt = Annotated[
    str | None,
    _data_dir(
        "Local copy instead of a download: LLMBar's folder (it holds Dataset/), or for a hub dataset "
        "(configs/hub_datasets.toml) the folder of hub snapshots, each in the hub's layout."
    ),
]
PerturbDataDirOpt = Annotated[str | None, _data_dir("Local dataset copy for --perturb (as run --data-dir).")]
LLMBarDirOpt = Annotated[str, _data_dir("Local LLMBar copy (the folder that holds Dataset/).")]
SkipBadRowsOpt = Annotated[
    bool,
    typer.Option(
        "--skip-bad-rows",
        help="Hub datasets: leave out (and count) rows whose prompt, chosen or rejected "
        "text is null or empty, instead of stopping at the first.",
    ),
]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N items.")]


def _subset(help: str) -> Any:
    return typer.Option("--subset", metavar="NAME", help=help)


SubsetOpt = Annotated[str | None, _subset("Only this subset (and those below it).")]
ShowSubsetOpt = Annotated[
    str | None, _subset("Keep one subset and those below it (Adversarial = its four sets).")
]


def _human(help: str) -> Any:
    return typer.Option("--human", metavar="FILE", dir_okay=False, help=help)


PilotHumanOpt = Annotated[Path | None, _human("The pilot's human labels (JSONL/CSV).")]
ReportHumanOpt = Annotated[
    Path | None,
    _human(
        "Human labels (JSONL or CSV: item_id, condition, label 1/2/tie, annotator): agreement, "
        "the annotators' ceiling and prediction-powered estimates (human.json)."
    ),
]
SelectiveHumanOpt = Annotated[Path, _human("Human labels (JSONL/CSV, as `report --human`).")]


def _out_dir(default: str) -> Any:
    return typer.Option("--out", metavar="DIR", help=f"Where the files go. \\[default: {default}]")


CompareOutOpt = Annotated[Path | None, _out_dir("RUN_B/compare-<RUN_A's name>")]
SelectiveOutOpt = Annotated[Path | None, _out_dir("the --run folder")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


# --- the calls ----------------------------------------------------------------------------------------
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        metavar="USD",
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


def _dry_run(help: str) -> Any:
    return typer.Option("--dry-run", help=help)


DryRunOpt = Annotated[bool, _dry_run("Print calls, tokens and cost; call nothing.")]
RunDryRunOpt = Annotated[bool, _dry_run("Print the calls, tokens and cost of every stage; call nothing.")]
JudgeDryRunOpt = Annotated[bool, _dry_run("Print the plan's size, tokens and cost.")]
BBEDryRunOpt = Annotated[bool, _dry_run("Price the calls of --perturb / --verify-kind fresh; call nothing.")]


def _yes(help: str) -> Any:
    return typer.Option("--yes", "-y", help=help)


SpendYesOpt = Annotated[bool, _yes("Do not ask before spending money.")]
ClearYesOpt = Annotated[bool, _yes("Do not ask.")]


# Options shared by every command that calls a model (INTERFACE.md). Unset flags are None: a
# judge's own settings in configs/judges.toml, then the defaults, apply.
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", metavar="URL", help="Override the provider endpoint.")
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        metavar="SECONDS",
        help=f"Per-request timeout in seconds. \\[default: {defaults.TIMEOUT_S:g}]",
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
PollIntervalOpt = Annotated[
    float, typer.Option("--poll-interval", metavar="SECONDS", help="Seconds between batch polls.")
]


# --- the judges and the templates -------------------------------------------------------------------
# The Study's flags (api/study.py), one declaration each: a command states only its default.
def _model(help: str) -> Any:
    return typer.Option("--model", metavar="MODEL", help=help)


ModelsOpt = Annotated[
    list[str] | None,
    _model(
        "Judge: PROVIDER:MODEL or a judges.toml name; repeat for several. Where the command "
        f"does not require it, {defaults.MODEL} (the embedded offline model)."
    ),
]
PerturbModelOpt = Annotated[str | None, _model("The run's judge to re-judge with --perturb.")]
CacheModelOpt = Annotated[str | None, _model("Only this model spec's answers.")]
GuidanceModelOpt = Annotated[
    str | None, _model("The judge spec whose new calls the guidance prices (default local).")
]


def _translator(help: str) -> Any:
    return typer.Option("--translator", metavar="MODEL", help=help)


TranslatorOpt = Annotated[str, _translator("Model spec or judges.toml name.")]
RunTranslatorOpt = Annotated[str | None, _translator("Translator (default: the first judge).")]


def _judge_name(help: str) -> Any:
    return typer.Option("--judge", metavar="MODEL", help=help)


ScoresJudgeOpt = Annotated[
    str | None, _judge_name("Name of the judge of a --scores table (with --calibrate-from: its run name).")
]
ImportJudgeOpt = Annotated[
    str | None, _judge_name("Name the judge this way (default: the source's own name).")
]
ConditionsOpt = Annotated[
    str | None,
    typer.Option(
        "--conditions",
        metavar="LIST",
        help="Comma-separated conditions of configs/conditions.toml; en is the source (judge's "
        "default: en plus every condition the run translated).",
    ),
]


def probes_option(lead: str) -> Any:
    """`--probes` with its help led by `lead`. The one flag a command declares through a call in its
    own annotation (`Annotated[str | None, opt.probes_option(...)]`): the help lists the probes
    registered when Typer builds the command (see probes_help), which a module-level alias here
    would freeze at import."""
    return typer.Option("--probes", metavar="LIST", help=probes_help(lead))


def _template(help: str) -> Any:
    return typer.Option("--template", metavar="FILE", help=help)


TemplateOpt = Annotated[str | None, _template("Judge template TOML (with answer format).")]
PerturbTemplateOpt = Annotated[str | None, _template("Judge template for --perturb.")]
NoTieProbesOpt = Annotated[bool, typer.Option("--no-tie-probes", help="Skip the tie-probes.")]


def _reask(help: str, *old_names: str) -> Any:
    return typer.Option("--reask", *old_names, min=0, help=help)


JudgeReaskOpt = Annotated[int, _reask("Re-ask an unreadable answer up to N times (each recorded).")]
TranslateReaskOpt = Annotated[
    int,
    _reask(
        "Re-ask an invalid JSON answer up to N times (as judge --reask; --max-reasks: old name).",
        "--max-reasks",
    ),
]


def _repeats(help: str) -> Any:
    return typer.Option("--repeats", min=1, metavar="K", help=help)


JudgeRepeatsOpt = Annotated[
    int | None,
    _repeats(
        "Re-ask K times the identical en input of sampled units (each a recorded call, never "
        "answered by the cache): the repeat jitter `bbe` reports beside the sensitivity."
    ),
]
BBERepeatsOpt = Annotated[
    int | None,
    _repeats("Re-ask K times the en input of --perturb-units sampled units (no cache): the jitter."),
]


# --- the analysis -----------------------------------------------------------------------------------
TauOpt = Annotated[
    float,
    typer.Option("--tau", help="A-BB tolerance: the largest tolerated L2 move of the normalised scores."),
]
DeltaOpt = Annotated[
    float, typer.Option("--delta", help="A-BB failure probability: the allowed probability of a larger move.")
]


def _seed(help: str) -> Any:
    return typer.Option("--seed", help=help)


BBESeedOpt = Annotated[int, _seed("Seed of every draw (noise, holdout, verify).")]
ReportSeedOpt = Annotated[int | None, _seed("Seed of the bootstrap. \\[default: 0]")]
SelftestSeedOpt = Annotated[int, _seed("Seed of the simulated judges and the bootstrap.")]


def _confidence(help: str) -> Any:
    return typer.Option("--confidence", min=0.5, max=0.999, help=help)


ConfidenceOpt = Annotated[float, _confidence("Level of every interval.")]
ReportConfidenceOpt = Annotated[float | None, _confidence("Level of every interval. \\[default: 0.95]")]

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
