"""Checks before any call is paid: Batch API support and the --max-cost budget."""

from __future__ import annotations

from collections.abc import Sequence

from judgebench.batch import refusal
from judgebench.errors import ConfigError
from judgebench.models.client import Budget, ModelClient


def refuse_batch(clients: Sequence[ModelClient]) -> None:
    """Stop before anything is sent when a client's provider has no Batch API."""
    for client in clients:
        why = refusal(client)
        if why:
            raise ConfigError(why)


def arm_budget(clients: Sequence[ModelClient], max_cost: float | None) -> None:
    """Share one spending cap between the clients (None: no cap). --max-cost can only bound what it
    can price, so an unpriced model is refused up front."""
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
