"""What `judgebench plan` prints: the fixed design by reply template, what it can detect, how long it
takes, and what --until-settled saves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from judgebench.cli.app import console
from judgebench.cli.render import note, usd

if TYPE_CHECKING:
    from judgebench.api import HumanBudgetResult, PlanResult


def study_plan(plan: PlanResult) -> None:
    """The plan's tables, then where each reply's output tokens come from and what is assumed."""
    console.print(
        f"{plan.items} items x {', '.join(plan.conditions)}: {plan.calls:,} calls "
        f"({', '.join(f'{m} {n:,}' for m, n in plan.calls_per_judge.items())})"
    )
    table = Table(title="fixed design: calls, tokens, cost, by reply template")
    for col in ("template", "model", "calls", "input tok", "output tok", "per reply", "live", "batch"):
        table.add_column(col, justify="left" if col in ("template", "model") else "right")
    for option in plan.templates:
        name = option.template + (" (chosen)" if option.chosen else "")
        for e in option.estimates:
            per = e.output_tokens / e.calls if e.calls else 0.0
            table.add_row(
                name, e.model, f"{e.calls:,}", f"{e.input_tokens:,}", f"{e.output_tokens:,}", f"{per:.1f}",
                usd(e.cost_live_usd), usd(e.cost_batch_usd),
            )  # fmt: skip
    console.print(table)
    for option in plan.templates:
        for e in option.estimates:
            note(f"output tokens per reply, {e.model} with {option.template}: {e.output_source}")
    for d in plan.detectable:
        mde = "out of reach" if d.mde is None else f"{100 * d.mde:.1f} pp"
        need = "" if d.items_for_target is None else f"; the target needs {d.items_for_target:,} items"
        console.print(f"MDE {d.comparison}: {mde} over {d.units:,} {d.unit}{need}")
    console.print(f"wall time: about {plan.wall_seconds / 60:.1f} min at {plan.wall_basis}")
    if plan.until_settled:
        settle = Table(title="--until-settled: expected calls per judge, by judge behaviour (simulated)")
        for col in ("behaviour", "calls", "share of full", "decided early"):
            settle.add_column(col, justify="left" if col == "behaviour" else "right")
        for s in plan.until_settled:
            settle.add_row(s.behaviour, f"{s.calls:,}", f"{s.calls_share:.0%}", f"{s.decided:.0%}")
        console.print(settle)
    for line in plan.assumptions:
        note(f"assumed: {line}")


def human_budget(plan: HumanBudgetResult) -> None:
    """`plan --human-labels`: human labels per condition for +-h on the win rate, with and without PPI++;
    with --selective-alpha, those for selective judging."""
    if plan.rows:
        _win_rate_budget(plan)
    if plan.selective:
        _selective_budget(plan)
    for line in plan.assumptions:
        note(line)


def _selective_budget(plan: HumanBudgetResult) -> None:
    first = plan.selective[0]
    table = Table(
        title=f"human labels for selective judging: agreement >= {1 - first.alpha:.0%} with probability "
        f">= {1 - first.delta:.0%} on {first.coverage:.0%} of the items"
    )
    for col in ("judge", "condition", "basis", "disagreement kept", "labels"):
        table.add_column(col, justify="left" if col in ("judge", "condition", "basis") else "right")
    for row in plan.selective:
        labels = "out of reach" if row.labels is None else f"{row.labels:,}"
        table.add_row(
            row.judge or "(any)", row.condition or "(any)", row.basis, f"{row.kept_error:.1%}", labels
        )
    console.print(table)


def _win_rate_budget(plan: HumanBudgetResult) -> None:
    level = f"{100 * plan.confidence:g}%"
    table = Table(
        title=f"human labels for a {level} interval of +-{100 * plan.half_width:g} pts on the win rate"
    )
    for col in (
        "judge",
        "condition",
        "basis",
        "agreement",
        "rho",
        "items",
        "human-only",
        "with PPI++",
        "saved",
    ):
        table.add_column(col, justify="left" if col in ("judge", "condition", "basis") else "right")
    for row in plan.rows:
        items = "unlimited" if row.items is None else f"{row.items:,}"
        human = "> items" if row.human_only is None else f"{row.human_only:,}"
        ppi = "> items" if row.ppi is None else f"{row.ppi:,}"
        saved = "" if row.saved is None else f"{row.saved:.0%}"
        table.add_row(
            row.judge or "(any)", row.condition, row.basis, f"{row.agreement:.0%}", f"{row.rho:.2f}", items,
            human, ppi, saved,
        )  # fmt: skip
    console.print(table)
