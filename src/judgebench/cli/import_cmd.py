"""CLI for `judgebench import`: a peer's judge log (`import FORMAT --run RUN PATH...`, one command per
format of the importer registry) or LLMBar's published results, brought into a run as judgments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
import typer.main
from typer.core import TyperGroup

from judgebench.cli import shared_options as opt
from judgebench.cli.app import app, console, handle_errors
from judgebench.errors import ConfigError, JudgebenchError

if TYPE_CHECKING:
    from typer._click import Command, Context

    from judgebench.api import ImportResult, ImportSummary
    from judgebench.importers.importer_registry import Importer


class _FormatGroup(TyperGroup):
    """`import`'s subcommands: the hand-written ones, then one per format of the importer registry
    (plugins included), built when asked for, so `judgebench --help` does not load the importers."""

    def _registry(self) -> dict[str, Importer]:
        from judgebench import api

        return {name: imp for name, imp in api.importers().items() if not imp.own_command}

    def list_commands(self, ctx: Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._registry()})

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        importer = self._registry().get(cmd_name)
        return None if importer is None else _format_command(importer)


import_app = typer.Typer(
    name="import",
    cls=_FormatGroup,
    help="Import a peer's judge log or published results into a run as judgments (then `judgebench report`).",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")

PathsArg = Annotated[list[str], typer.Argument(metavar="PATH...", help="The files to read.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", metavar="KEY=VALUE", help="A format setting (see the format's page)."),
]
HumanOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--human", metavar="FILE", help="Human judgments joined as human labels (mt-bench, alpaca-eval)."
    ),
]


def _format_command(importer: Importer) -> Command:
    """The `import FORMAT` command of one registered importer."""
    one = typer.Typer(add_completion=False)  # as the app: no --install-completion on a subcommand

    @one.command(importer.name, help=importer.summary)
    @handle_errors
    def command(
        run: opt.RunOpt,
        paths: PathsArg,
        judge: opt.ImportJudgeOpt = None,
        settings: SetOpt = None,
        human: HumanOpt = None,
        model: opt.GuidanceModelOpt = None,
        wait_lock: opt.WaitLockOpt = False,
    ) -> None:
        from judgebench import api

        pairs = [s.partition("=") for s in settings or ()]
        bad = [key for key, eq, _ in pairs if not eq or not key]
        if bad:
            raise ConfigError(f"--set takes KEY=VALUE, got {bad[0]!r}")
        unknown = [key for key, _, _ in pairs if key not in importer.settings]
        if unknown:
            known = ", ".join(importer.settings) or "none"
            raise ConfigError(f"{importer.name} has no setting '{unknown[0]}' (settings: {known})")
        if human and not importer.takes_human:
            raise ConfigError(
                f"{importer.name} takes no --human file (its human labels come in its own file)"
            )
        result = api.import_judgments(
            run,
            importer.name,
            paths,
            judge=judge,
            human=human or (),
            settings={key: value for key, _, value in pairs},
            wait_lock=wait_lock,
        )
        _show(result)
        _guidance(run, model)

    return typer.main.get_command(one)


def _show(result: ImportResult) -> None:
    for name, entry in result.judges.items():
        console.print(
            f"imported {entry.judgments} judgments of '{name}' on {result.items} items ({result.format}); "
            f"{entry.appended} new lines, {entry.invalid} invalid -> {result.run}/judgments.jsonl",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        for h in entry.headlines:
            value = "n/a" if h.value is None else f"{100 * h.value:.2f}%"
            where = " ".join(x for x in (h.system or "", "" if h.subset == "all" else h.subset) if x)
            console.print(
                f"  {h.name}{f' ({where})' if where else ''}: {value} (n={h.n})",
                highlight=False,
                markup=False,
            )
    for path, digest in next(iter(result.judges.values())).checksums.items() if result.judges else ():
        console.print(f"  source {path} sha256 {digest[:16]}", highlight=False, markup=False, soft_wrap=True)
    if result.human_file:
        console.print(
            f"{result.human_labels} human labels -> {result.human_file} "
            f"(`judgebench report --run {result.run} --human {result.human_file}`)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    for note in result.notes:
        console.print(note, style="yellow", highlight=False, markup=False)


def _guidance(run: str, model: str | None) -> None:
    """What new calls could add to the imported run and what they would cost (the plan's estimate)."""
    from judgebench import api

    spec = model or "local"
    try:
        plan = api.plan_study(
            api.PlanRequest(models=[spec], dataset="imported", data_dir=run, conditions=["zh"], sim_seeds=1)
        )
    except JudgebenchError as exc:
        console.print(f"(no estimate of new calls: {exc})", style="dim", highlight=False, markup=False)
        return
    cost = sum(e.cost_live_usd or 0.0 for e in plan.estimates)
    per_call = cost / plan.calls if plan.calls else 0.0
    probe_calls = 2 * plan.items  # a probe condition is judged in both orders, one call each
    console.print(
        f"next: `judgebench report --run {run}` (no call). With new calls ({spec}; `--model SPEC` prices "
        f"another): a target language (`judgebench translate --run {run} --conditions zh`, then "
        f"`judgebench judge --run {run} --model {spec}`: en and zh, both orders, with tie-probes) is "
        f"{plan.calls} judge calls, about ${cost:.2f} live plus the translation; each probe "
        f"(`judge --probes length`, ...) is {probe_calls} calls, about ${per_call * probe_calls:.2f}. "
        f"`judgebench plan --dataset imported --data-dir {run}` gives the full estimate.",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@import_app.command("llmbar-results")
@handle_errors
def llmbar_results(
    run: opt.RunOpt,
    data_dir: opt.LLMBarDirOpt,
    evaluator: Annotated[
        list[str],
        typer.Option(
            "--evaluator",
            metavar="EVALUATOR",
            help="Published evaluator/strategy, e.g. GPT-4/Vanilla; repeat for several.",
        ),
    ],
    wait_lock: opt.WaitLockOpt = False,
) -> None:
    """Turn LLMBar's published per-item verdicts (result.json) into `en` pair judgments, one judge per
    --evaluator (named as given, e.g. GPT-4/Vanilla)."""
    from judgebench import api  # the library loads when a command runs: --help stays fast

    for name in dict.fromkeys(evaluator):  # each once, in the order given
        _import_one(api.import_llmbar_results(run, data_dir, name, wait_lock=wait_lock), run)


def _import_one(summary: ImportSummary, run: str) -> None:
    subsets = ", ".join(f"{name} {count}" for name, count in summary.subsets.items())
    console.print(
        f"imported {summary.judgments} judgments of '{summary.judge}' ({subsets}); "
        f"{summary.appended} new lines, {summary.invalid} invalid (null winner) -> {run}/judgments.jsonl",
        highlight=False,
        soft_wrap=True,
    )
    if summary.missing_subsets:
        console.print(
            f"no result.json for: {', '.join(summary.missing_subsets)}", style="yellow", highlight=False
        )
