"""The certificates a release can use, by name (PROTOCOL §5b): one registry, read by `auto`, the
release, verification, bbe.json and the report.

A certificate kind states what it assumes, whether its guarantee carries over (holds for new items
drawn like the measured ones) or covers only the listed neighbours, how a release that uses it is
verified, and how it is built from the evidence. Adding one: subclass `CertificateKind` and call
`register(...)` once; `--certificate NAME`, `auto` (when it carries over), the certificate rows,
verification and the report then use it with nothing else changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from judgebench.bbe.certificates import Certificate, Evidence
    from judgebench.bbe.mechanism import DeltaSplit

# The kinds' names and help load without numpy (`bbe --help` lists them); their arithmetic
# (certificates, mechanism) loads when a certificate is built.

AUTO = "auto"
# out_of_sample: the released sigma on the release's neighbours, and the certificate recalibrated on
# half the items counted on the other half (holdout) or on freshly judged neighbours (fresh);
# in_sample_monte_carlo: a Monte Carlo of the release's own violation probability on its own
# neighbours (a certificate of the listed neighbours makes no claim a held-out half could test).
Verification = Literal["out_of_sample", "in_sample_monte_carlo"]

NEW_ITEMS = "new items drawn like the measured ones (it carries over)"
LISTED = "the listed neighbours of this context only (in-sample; it does not carry over)"


class CertificateKind:
    """One certificate: its name, assumptions, scope, verification rule and construction."""

    name: ClassVar[str]
    assumptions: ClassVar[str]
    # what `--certificate`'s help says of it beside its name (nothing more if empty)
    summary: ClassVar[str] = ""
    verification: ClassVar[Verification] = "out_of_sample"

    def carries_over(self, ev: Evidence) -> bool:
        """Whether the guarantee holds for new items drawn like the measured ones."""
        return True

    def build(self, ev: Evidence) -> Certificate | None:
        """The certificate on this evidence, None where it does not apply."""
        raise NotImplementedError

    def scope(self, carries_over: bool) -> str:
        return NEW_ITEMS if carries_over else LISTED

    def infeasible_detail(self, alpha: float, sensitivity: float, split: DeltaSplit, tau: float) -> str:
        """What an infeasible release's reason adds for this certificate (after its bound)."""
        return ""


_REGISTRY: dict[str, CertificateKind] = {}


def register(kind: CertificateKind) -> CertificateKind:
    """Add a certificate kind (its name must be new); listed after those registered before it."""
    if kind.name == AUTO or kind.name in _REGISTRY:
        raise ValueError(f"certificate '{kind.name}' is already registered")
    _REGISTRY[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (a test's toy certificate)."""
    _REGISTRY.pop(name, None)


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def choices() -> tuple[str, ...]:
    """What --certificate accepts: auto, then every registered name (toys and plugins included)."""
    return (AUTO, *_REGISTRY)


def kind_of(name: str) -> CertificateKind:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown certificate '{name}' (known: {', '.join((AUTO, *_REGISTRY))})") from None


def check_choice(name: str) -> str:
    """`auto` or a registered name (what --certificate accepts)."""
    if name != AUTO:
        kind_of(name)
    return name


def _estimate_split(ev: Evidence) -> float:
    from judgebench.bbe.mechanism import DEFAULT_SPLIT_BOUND

    return ev.split.estimate if ev.split.estimate > 0 else DEFAULT_SPLIT_BOUND[2] * ev.delta


def _measured(ev: Evidence) -> bool:
    return ev.changes is not None and len(ev.changes) > 0 and not ev.fixed


class Exact(CertificateKind):
    name = "exact"
    summary = "in-sample: the listed neighbours only"
    assumptions = (
        "T(D) is the finite list of neighbours that were all judged; the noise is Gaussian. It is the "
        "tightest calibration for that list (violation probability delta exactly) and says nothing of "
        "other items."
    )
    verification = "in_sample_monte_carlo"

    def carries_over(self, ev: Evidence) -> bool:
        return False

    def build(self, ev: Evidence) -> Certificate | None:
        if not _measured(ev):
            return None
        assert ev.changes is not None
        from judgebench.bbe.certificates import Certificate, distinct_changes, exact_alpha_sup

        values, weights = distinct_changes(ev.changes)
        sup = exact_alpha_sup(values, weights, ev.tau, ev.delta)
        return Certificate(
            self.name, None, sup, 0.0, ev.delta, 0.0, False, ev.tau, ev.d, values, weights, True
        )


class ExactUCB(CertificateKind):
    name = "exact_ucb"
    assumptions = (
        "Items are drawn independently like the measured ones (an item's neighbours may be correlated: "
        "one term per item); the exact probability is computed on upper confidence bounds of the "
        "shares of each change size (confidence 1 - delta_estimate)."
    )

    def build(self, ev: Evidence) -> Certificate | None:
        if not _measured(ev):
            return None
        assert ev.changes is not None
        from judgebench.bbe.certificates import Certificate, dominating_distribution, exact_alpha_sup

        d_e = _estimate_split(ev)
        values, weights = dominating_distribution(ev.changes, ev.groups, d_e, ev.k)
        sup = exact_alpha_sup(values, weights, ev.tau, ev.delta - d_e)
        return Certificate(
            self.name, None, sup, 0.0, ev.delta - d_e, d_e, True, ev.tau, ev.d, values, weights
        )


class Range(CertificateKind):
    name = "range"
    assumptions = "A neighbour changes at most k units, each normalised score in [0, 1]: b = sqrt(k) always."

    def build(self, ev: Evidence) -> Certificate | None:
        from judgebench.bbe.certificates import Certificate

        root_k = math.sqrt(ev.k)
        return Certificate(self.name, root_k, ev.tau / root_k, 0.0, ev.delta, 0.0, True, ev.tau, ev.d)


class Quantile(CertificateKind):
    name = "quantile"
    assumptions = (
        "Items are drawn independently like the measured ones, each contributing about as many "
        "neighbours; b is an order statistic of the items' largest changes (confidence "
        "1 - delta_estimate), so correlated neighbours of one item count once."
    )

    def build(self, ev: Evidence) -> Certificate | None:
        if not _measured(ev):
            return None
        assert ev.changes is not None
        from judgebench.bbe.certificates import Certificate, item_maxima, quantile_bound
        from judgebench.bbe.mechanism import DEFAULT_SPLIT_BOUND, DeltaSplit

        qs = ev.split
        if qs.estimate <= 0:
            qs = DeltaSplit.from_fractions(ev.delta, DEFAULT_SPLIT_BOUND, upper_bound=True)
        b = quantile_bound(item_maxima(ev.changes, ev.groups), 1.0 - qs.sensitivity, qs.estimate)
        if b is None:
            return None
        sup = math.inf if b <= 0 else ev.tau / b
        return Certificate(self.name, b, sup, qs.sensitivity, qs.noise, qs.estimate, True, ev.tau, ev.d)


class Markov(CertificateKind):
    name = "markov"
    assumptions = (
        "Markov's inequality on the RMS sensitivity Delta (the reference): it carries over when Delta "
        "is an upper confidence bound (--upper-bound) or a stated value; on the plug-in estimate it "
        "describes the measured neighbours."
    )

    def carries_over(self, ev: Evidence) -> bool:
        return ev.upper_bound or ev.fixed

    def scope(self, carries_over: bool) -> str:
        return (
            NEW_ITEMS if carries_over else "the measured neighbours (plug-in Delta; it does not carry over)"
        )

    def infeasible_detail(self, alpha: float, sensitivity: float, split: DeltaSplit, tau: float) -> str:
        from judgebench.bbe.mechanism import max_sensitivity

        most = max_sensitivity(tau, alpha, split.sensitivity)
        return (
            f"; alpha*Delta/sqrt(delta_sensitivity) = {alpha:g}*{sensitivity:.4g}/"
            f"sqrt({split.sensitivity:g}), or a sensitivity below {most:.4g} at alpha {alpha:g}"
        )

    def build(self, ev: Evidence) -> Certificate | None:
        from judgebench.bbe.certificates import Certificate

        b = ev.sensitivity / math.sqrt(ev.split.sensitivity)
        sup = math.inf if b <= 0 else ev.tau / b
        s = ev.split
        return Certificate(self.name, b, sup, s.sensitivity, s.noise, s.estimate, True, ev.tau, ev.d)


for _kind in (Exact(), ExactUCB(), Range(), Quantile(), Markov()):
    register(_kind)


def applicable(ev: Evidence) -> list[Certificate]:
    """Every registered certificate that applies to this evidence, in registration order, each with
    its kind's carry-over property."""
    out = []
    for kind in _REGISTRY.values():
        cert = kind.build(ev)
        if cert is not None:
            out.append(replace(cert, name=kind.name, carries_over=kind.carries_over(ev)))
    return out


@dataclass(frozen=True)
class Pick:
    certificate: Certificate
    alpha: float
    sigma: float | None


def pick(certs: list[Certificate], choice: str, *, alpha: float | None, margin: float) -> Pick:
    """The certificate a release uses: the named one, or (auto) the tightest of those that carry over
    (a release is read as a statement about data like this): the largest alpha, then the largest sigma."""
    if choice != AUTO:
        pool = [c for c in certs if c.name == choice]
        if not pool:
            raise ValueError(
                f"certificate '{choice}' does not apply here (applicable: {', '.join(c.name for c in certs)})"
            )
    else:
        pool = [c for c in certs if c.carries_over]
        if not pool:
            raise ValueError(
                "no applicable certificate carries over to new items "
                f"(applicable: {', '.join(c.name for c in certs)}); name one with --certificate"
            )
    scored: list[tuple[tuple[float, float, float], Pick]] = []
    for c in pool:
        a = c.auto_alpha(margin) if alpha is None else alpha
        s = c.sigma(a)
        key = (0.0 if s is None else 1.0, a if s is not None else c.alpha_sup, s or 0.0)
        scored.append((key, Pick(c, a, s)))
    return max(scored, key=lambda t: t[0])[1]
