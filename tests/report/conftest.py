"""Synthetic analyses for the report tests: a full two-judge run, an en-only run, and hand-built records
with the awkward values (None, NaN, no interval, odd characters) a renderer must survive."""

from __future__ import annotations

import numpy as np
import pytest

from judgebench.analysis import Analysis, JudgeSummary, ReadinessVerdict, ReportSettings, analyze
from judgebench.records import Judgment, MetricRecord

SUBSETS = (
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)
JUDGES = ("openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5")


def make_judgments(
    judges: tuple[str, ...] = JUDGES,
    conditions: tuple[str, ...] = ("en", "zh", "ls"),
    *,
    per_subset: int = 8,
    tie_probes: bool = True,
    seed: int = 3,
) -> list[Judgment]:
    """Judges that are mostly right, flip and tie sometimes, with invalid answers and missing calls."""
    rng = np.random.default_rng(seed)
    out: list[Judgment] = []
    for judge in judges:
        for subset in SUBSETS:
            for i in range(per_subset):
                item_id = f"{subset}/{i}"
                label = 1 + (i % 2)
                for cond in conditions:
                    for order in ("orig", "swap"):
                        u = rng.random()
                        if u < 0.03:
                            verdict: str | None = None
                        elif u < 0.07:
                            verdict = "invalid"
                        elif u < 0.15:
                            verdict = "tie"
                        elif u < 0.8:
                            verdict = str(label)
                        else:
                            verdict = str(3 - label)
                        out.append(
                            _judgment(judge, item_id, subset, "pair", cond, order, verdict, label, rng)
                        )
                if tie_probes and "zh" in conditions:
                    for order in ("en_zh", "zh_en"):
                        verdict = str(rng.choice(["tie", "tie", "tie", "zh", "en", "invalid"]))
                        out.append(
                            _judgment(judge, item_id, subset, "tie_probe", "zh", order, verdict, label, rng)
                        )
    return out


def _judgment(
    judge: str,
    item_id: str,
    subset: str,
    kind: str,
    cond: str,
    order: str,
    verdict: str | None,
    label: int,
    rng: np.random.Generator,
) -> Judgment:
    if verdict is None:
        winner = None
    elif verdict in ("tie", "invalid"):
        winner = "Tie" if verdict == "tie" else "invalid"
    elif kind == "pair":
        winner = "A" if (verdict == "1") == (order == "orig") else "B"
    else:
        winner = "A" if (verdict == "en") == (order == "en_zh") else "B"
    return Judgment.model_validate(
        {
            "judge": judge,
            "item_id": item_id,
            "subset": subset,
            "kind": kind,
            "condition": cond,
            "order": order,
            "raw": None if verdict is None else "{}",
            "winner": winner,
            "verdict": verdict,
            "error": "HTTP 503 after 8 attempts" if verdict is None else None,
            "label": label,
            "confidence": float(rng.uniform(0.5, 1.0)) if verdict not in (None, "invalid") else None,
            "usage": {"input_tokens": 500, "output_tokens": 40} if verdict is not None else None,
            "cost_usd": 0.0002 if verdict is not None else None,
        }
    )


SETTINGS = ReportSettings(bootstrap_samples=40, seed=1)


@pytest.fixture(scope="session")
def judgments() -> list[Judgment]:
    return make_judgments()


@pytest.fixture(scope="session")
def flagged() -> list[str]:
    return ["Natural/1", "Adversarial/GPTOut/2", "Adversarial/Manual/5"]


@pytest.fixture(scope="session")
def full_analysis(judgments: list[Judgment], flagged: list[str]) -> Analysis:
    """Two judges, en/zh/ls, every subset, tie-probes, filtered both ways, readiness verdicts."""
    return analyze(judgments, flagged_items=flagged, settings=SETTINGS)


@pytest.fixture(scope="session")
def en_only_analysis() -> Analysis:
    """One judge, en only, no tie-probes: nothing to flip, no verdict to give."""
    return analyze(make_judgments(("local",), ("en",), tie_probes=False), settings=SETTINGS)


def record(judge: str, metric: str, condition: str, value: float | None, **extra: object) -> MetricRecord:
    data: dict[str, object] = {
        "judge": judge,
        "metric": metric,
        "condition": condition,
        "subset": "all",
        "filtered": False,
        "value": value,
        "n": 10,
    }
    data.update(extra)
    return MetricRecord.model_validate(data)


@pytest.fixture()
def awkward_analysis() -> Analysis:
    """Hand-built: a judge name with markup characters, None and NaN values, no intervals or extras."""
    judge = "weird|<script>alert(1)</script>"
    records = [
        record(judge, "strict_accuracy", "en", 0.5, ci_low=0.3, ci_high=0.7),
        record(judge, "strict_accuracy", "zh", None),
        record(judge, "tie_half_accuracy", "en", float("nan")),
        record(judge, "flip_rate", "en->zh", None),
        record(judge, "mcnemar", "en->zh", 0.0, p=1.0, b=0, c=0),
        record(judge, "position_inconsistency", "en", 0.25),
        record(judge, "tie_probe_tie", "zh", 1.0, ci_low=0.7, ci_high=1.0),
        record(judge, "tie_probe_en", "zh", 0.0),
        record(judge, "tie_probe_zh", "zh", 0.0),
        record(judge, "tie_probe_en_share", "zh", None, p=None),
    ]
    return Analysis(
        records=records,
        readiness=[ReadinessVerdict(judge=judge, condition="zh", status="inconclusive", reasons=[])],
        judges=[
            JudgeSummary(
                judge=judge,
                judgments=4,
                answered=3,
                missing=1,
                invalid=1,
                input_tokens=0,
                output_tokens=0,
                cost_usd=None,
            )
        ],
        flagged_items=[],
        conditions=["en", "zh"],
        subsets=["all"],
        settings=ReportSettings(),
    )
