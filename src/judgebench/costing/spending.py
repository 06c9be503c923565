"""Checks before any call is paid: Batch API support and the --max-cost budget, which is the run's.

`--max-cost` caps what the run folder pays in all, not what one command pays: the budget starts at
what the run already records as paid (`run_spent`), so running the same command again, or after an
interruption, never spends the cap a second time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from judgebench.batch import refusal
from judgebench.errors import ConfigError
from judgebench.models.client import Budget, ModelClient
from judgebench.store.run_folder import RunDir


def refuse_batch(clients: Sequence[ModelClient]) -> None:
    """Stop before anything is sent when a client's provider has no Batch API."""
    for client in clients:
        why = refusal(client)
        if why:
            raise ConfigError(why)


def arm_budget(clients: Sequence[ModelClient], max_cost: float | None) -> None:
    """Share one spending cap between the clients (None: no cap). --max-cost can only bound what it
    can price, so an unpriced model is refused up front. `seed_budget` then counts what the run
    already paid (under the stage's lock)."""
    if max_cost is None:
        return
    budget = Budget(max_cost_usd=max_cost)
    for client in clients:
        if client.prices.price(client.spec.provider, client.spec.model) is None:
            raise ConfigError(
                f"--max-cost cannot bound {client.spec.text}: it has no price in configs/prices.toml "
                "(add one, or run without --max-cost)"
            )
        client.budget = budget


def _paid(lines: Iterable[tuple[float | None, bool | None]]) -> float:
    """The sum of the costs of lines not answered from the store (a cost that is not a sum of money,
    negative or not finite, counts nothing: an edited line lifts no cap)."""
    total = 0.0
    for cost, from_cache in lines:
        if from_cache is not True and cost is not None and math.isfinite(cost) and cost > 0:
            total += cost
    return total


def run_spent(run: RunDir) -> float:
    """USD the run folder records as paid: every line of judgments.jsonl and bbe_neighbours.jsonl
    (superseded lines and re-asks too: each was paid) that was not answered from the response store,
    and every translate command's paid calls (the manifest keeps their sum)."""
    spent = _paid((a.cost_usd, a.from_cache) for a in run.judgments().lines())
    spent += _paid((j.cost_usd, j.from_cache) for j in run.neighbours().lines())
    manifest = run.load_manifest()
    stage = manifest.stages.translate if manifest is not None else None
    if stage is not None:
        spent += stage.paid_usd()
    return round(spent, 6)


def seed_budget(clients: Sequence[ModelClient], run: RunDir) -> None:
    """Start the clients' shared budget at what the run already paid (once: call it under the lock,
    before the first call)."""
    budgets = {id(c.budget): c.budget for c in clients if c.budget is not None}
    if not budgets:
        return
    spent = run_spent(run)
    for budget in budgets.values():
        budget.spent_usd += spent
