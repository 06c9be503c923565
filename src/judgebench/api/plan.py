"""`judgebench plan`: what a study costs and what it can detect, before a single call.

For the given judges, dataset and conditions: the calls, tokens and cost (live and batch) of the fixed
design; the minimum detectable flip-rate and position-inconsistency differences at the chosen power
for that many items, and the items needed for a target `mde`; the wall time at the given rate and
concurrency; and the expected calls of `judge --until-settled` for stated judge behaviours (the
simulated fleet of configs/sim.toml, judged over a few seeds on this many items).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from judgebench.analysis import stats
from judgebench.analysis.findings import ReportSettings
from judgebench.analysis.frame import COLUMNS
from judgebench.analysis.sequential import item_values, settle, stratified_order
from judgebench.api.datasets import pick_items
from judgebench.api.judge import plan_design
from judgebench.api.options import CallOptions
from judgebench.api.study import ConditionNames, Study
from judgebench.conditions import SOURCE, select_conditions
from judgebench.config import defaults
from judgebench.costing.estimate import Estimate
from judgebench.costing.output_tokens import run_figures
from judgebench.costing.template_costs import TemplateCost, template_costs
from judgebench.data.dataset import load_dataset, narrowed_to
from judgebench.judge.call_plan import ahead_variants
from judgebench.models.sim import load_scenario, pair_letter
from judgebench.records import Item

# The judge behaviours whose --until-settled cost `plan` states (configs/sim.toml scenarios).
BEHAVIOURS = {
    "clearly biased (flips 35-45%)": "bench-biased",
    "clearly unbiased (flips 2%)": "bench-unbiased",
    "borderline (flips 15%, the limit)": "bench-borderline",
    "degenerate (always A)": "bench-always-a",
}


class PlanRequest(Study):
    """What `judgebench plan` asks for: the Study (with no dataset or conditions: the bundled sample,
    zh and ls) and the assumptions of its power and duration."""

    # a study planned from scratch: the bundled sample and its zh and ls (the Study's fields, these defaults)
    dataset: str | None = defaults.DATASET
    conditions: ConditionNames = Field(default=defaults.CONDITIONS, validate_default=True)
    tie_probes: bool = True
    # a finished run whose judgments' recorded output tokens cost the replies (per judge and template)
    from_run: Path | None = None
    mde: float | None = Field(default=None, gt=0.0, lt=1.0)  # the target difference: items needed
    power: float = Field(default=defaults.PLAN_POWER, gt=0.0, lt=1.0)
    alpha: float = Field(default=defaults.PLAN_ALPHA, gt=0.0, lt=1.0)
    # assumed share of discordant units (a flip in one condition and not the other): the MDE's psi
    discordant: float = Field(default=defaults.PLAN_DISCORDANT, gt=0.0, le=1.0)
    rpm: float | None = Field(default=None, gt=0.0)
    concurrency: int = Field(default=defaults.CONCURRENCY, ge=1)
    latency_s: float = Field(default=defaults.PLAN_LATENCY_S, gt=0.0)  # assumed seconds per call
    round_items: int = Field(default=defaults.ROUND_ITEMS, ge=1)
    sim_seeds: int = Field(
        default=defaults.PLAN_SIM_SEEDS, ge=1
    )  # seeds per behaviour for the --until-settled figures


class Detectable(BaseModel):
    """The MDE of one comparison at the plan's size, and the units needed for the target."""

    comparison: str
    units: int
    unit: str
    mde: float | None
    units_for_target: int | None = None
    items_for_target: int | None = None


class Settling(BaseModel):
    behaviour: str
    scenario: str
    calls_share: float  # mean over seeds of the calls used / the full design's
    calls: int  # per judge
    decided: float  # share of seeds whose verdicts were all decided before the items ran out


class PlanResult(BaseModel):
    items: int
    conditions: list[str]
    calls_per_judge: dict[str, int]
    calls: int
    estimates: list[Estimate]
    # the same calls with each of COMPARED_TEMPLATES (and the chosen template): the replies' cost
    templates: list[TemplateCost] = Field(default_factory=list)
    detectable: list[Detectable]
    wall_seconds: float
    wall_basis: str
    until_settled: list[Settling]
    assumptions: list[str]


def _units_for(target: float, psi: float, alpha: float, power: float) -> int | None:
    """The fewest units whose McNemar MDE is at most `target` (None: out of reach below 10^7)."""
    hi = 2
    while (mde := stats.mde_mcnemar(hi, round(psi * hi), alpha=alpha, power=power)) is None or mde > target:
        hi *= 2
        if hi > 10**7:
            return None
    lo = hi // 2
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        got = stats.mde_mcnemar(mid, round(psi * mid), alpha=alpha, power=power)
        lo, hi = (lo, mid) if got is not None and got <= target else (mid, hi)
    return hi


def _detectable(items: int, req: PlanRequest) -> list[Detectable]:
    out = []
    for comparison, units, unit, per_item in (
        ("flip-rate difference (two judges or two targets, paired)", 2 * items, "(item, order) pairs", 2),
        ("position-inconsistency increase en->target (paired)", items, "items", 1),
    ):
        mde = stats.mde_mcnemar(units, round(req.discordant * units), alpha=req.alpha, power=req.power)
        need = None if req.mde is None else _units_for(req.mde, req.discordant, req.alpha, req.power)
        out.append(
            Detectable(
                comparison=comparison,
                units=units,
                unit=unit,
                mde=mde,
                units_for_target=need,
                items_for_target=None if need is None else math.ceil(need / per_item),
            )
        )
    return out


def simulated_frame(scenario: str, seed: int, items: Sequence[Item], targets: Sequence[str]) -> pd.DataFrame:
    """The pair judgments a `sim:` judge would give (a `judgment_frame`), with no call made."""
    s = load_scenario(scenario).model_copy(update={"seed": seed})
    rows = []
    for item in items:
        label = item.label if item.label in (1, 2) else 1
        for cond in [SOURCE, *targets]:
            for order in ("orig", "swap"):
                gold = "A" if (label == 1) == (order == "orig") else "B"
                letter = pair_letter(s, item.id, order, cond, gold)
                first, second = ("1", "2") if order == "orig" else ("2", "1")
                chosen = first if letter == "A" else second
                verdict = letter.lower() if letter in ("Tie", "invalid") else chosen
                rows.append(
                    (scenario, item.id, item.subset, "pair", cond, order, verdict, letter, float(label),
                     math.nan, 0, 0, math.nan)
                )  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def expected_settling(
    items: Sequence[Item], targets: Sequence[str], per_item_calls: float, req: PlanRequest
) -> list[Settling]:
    settings = ReportSettings(confidence=1.0 - req.alpha)
    order_of = {i.id: i.subset for i in items}
    out = []
    for behaviour, scenario in BEHAVIOURS.items():
        shares, decided = [], 0
        for seed in range(req.sim_seeds):
            order = stratified_order(order_of, seed)
            values = item_values(simulated_frame(scenario, 1000 + seed, items, targets), targets)
            s = settle(values, scenario, targets, settings, order, intervals=False)
            stop = len(order)
            if s.first_settled is not None:
                stop = min(len(order), math.ceil(s.first_settled / req.round_items) * req.round_items)
                decided += int(stop < len(order) or s.settled)
            shares.append(stop / len(order))
        share = float(np.mean(shares))
        out.append(
            Settling(
                behaviour=behaviour,
                scenario=scenario,
                calls_share=share,
                calls=round(share * per_item_calls * len(items)),
                decided=decided / req.sim_seeds,
            )
        )
    return out


def _variant_sources(targets: Sequence[str], carried: Mapping[str, object]) -> list[str]:
    """What the targets' prompts are costed at: the dataset's own variants, or the en text's tokens."""
    own = [t for t in targets if t in carried]
    out = [f"{', '.join(own)}: costed at the dataset's own variants"] if own else []
    if len(own) < len(targets) or not targets:
        out.append(
            "target-language prompts are costed at the en text's tokens (translations are not known yet)"
        )
    return out


def plan_study(request: PlanRequest | None = None, *, options: CallOptions | None = None) -> PlanResult:
    """The cost, power, duration and --until-settled savings of a study; makes no call (`options`:
    the command's judges, resolved once)."""
    req = request or PlanRequest()
    judges = (options or CallOptions()).judges()
    resolved = judges.resolve_all(req.models)  # a bad spec first, before the dataset loads
    spec = narrowed_to(req.dataset or defaults.DATASET, req.conditions)  # m-rewardbench's languages
    ds = load_dataset(spec, data_dir=req.data_dir)
    items = pick_items(ds.items, req.subset, req.limit, ds.spec)
    targets = select_conditions(req.targets()) if req.targets() else []
    # judge's own planning, in memory: the dataset's own variants (M-RewardBench), else the en text
    # standing in for the target texts, not known before translation
    variants = ahead_variants(items, targets, ds.variants)
    calls = plan_design(
        items, variants, [SOURCE, *(c.name for c in targets)], req, tie_probes=req.tie_probes
    ).calls
    observed = run_figures(req.from_run) if req.from_run is not None else None
    templates = template_costs(calls, resolved.values(), req.template_path, observed, catalog=judges)
    estimates = next(t.estimates for t in templates if t.chosen)
    per_judge = {m: sum(1 for c in calls if c.judge == m) for m in req.models}
    rate = req.concurrency / req.latency_s
    basis = f"{req.concurrency} concurrent calls of about {req.latency_s:g} s"
    if req.rpm is not None and req.rpm / 60.0 < rate:
        rate, basis = req.rpm / 60.0, f"{req.rpm:g} requests per minute"
    per_item = per_judge[req.models[0]] / max(1, len(items)) if req.models else 0.0
    names = [c.name for c in targets]
    return PlanResult(
        items=len(items),
        conditions=[SOURCE, *names],
        calls_per_judge=per_judge,
        calls=len(calls),
        estimates=estimates,
        templates=templates,
        detectable=_detectable(len(items), req),
        wall_seconds=len(calls) / rate,
        wall_basis=f"{basis} (judges share the rate)",
        until_settled=expected_settling(items, names, per_item, req) if names and items else [],
        assumptions=[
            *_variant_sources(names, ds.variants),
            "output tokens per judgment: by judge and template, from the source named under the "
            "table (configs/output_tokens.toml; `--from-run RUN` for a run's own); the assumed "
            "figures leave out a reasoning model's hidden reasoning tokens, which are billed as "
            "output (measure those with --from-run)",
            f"MDEs: two-sided McNemar at alpha {req.alpha:g}, power {req.power:g}, discordant share "
            f"{req.discordant:g} (Connor 1987)",
            f"--until-settled: {req.sim_seeds} seeds per behaviour of the simulated judges, rounds of "
            f"{req.round_items} items, anytime-valid {100 * (1 - req.alpha):g}% confidence sequences",
        ],
    )
