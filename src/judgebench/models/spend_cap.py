"""`--max-cost`: a spending cap shared by every client given the same `Budget` (all judges of a run).

Before an uncached call is made (live or in a batch), its cost is estimated (input tokens
estimated, output at `max_tokens`) and reserved; the call is refused when spent + reserved +
estimate would pass the cap. A refused call is a `CallResult` with `refused="budget"` and an
`error` that says so in words (it starts with "BudgetExceeded"); the run stays resumable. The cap
is the run's: the commands seed `spent_usd` with what the run folder records as paid before
(`costing.spending.run_spent`), so running the same command again does not spend the cap again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Budget"]


@dataclass
class Budget:
    """A spending cap in USD, with what was spent and what is reserved by calls in flight."""

    max_cost_usd: float
    spent_usd: float = 0.0
    reserved_usd: float = 0.0

    def try_reserve(self, estimate: float) -> bool:
        if self.spent_usd + self.reserved_usd + estimate > self.max_cost_usd:
            return False
        self.reserved_usd += estimate
        return True

    def settle(self, estimate: float, actual: float) -> None:
        """Release a call's reservation and count what it cost; a cost that is not a sum of money
        (negative, NaN, infinite) counts as the reservation, so no answer can lift the cap."""
        self.reserved_usd = max(0.0, self.reserved_usd - estimate)
        self.spent_usd += actual if math.isfinite(actual) and actual >= 0 else estimate

    def refusal(self, estimate: float, *, batch: bool = False) -> str:
        """Why a call of up to `estimate` USD is refused (the human text of a budget refusal)."""
        price = " (batch price)" if batch else ""
        return (
            f"BudgetExceeded: spent ${self.spent_usd:.4f} + in flight ${self.reserved_usd:.4f} + "
            f"this call up to ${estimate:.4f}{price} would pass the cap ${self.max_cost_usd:.4f}"
        )
