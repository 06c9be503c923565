"""What a study's replies cost with each bundled template: the cost rows `judgebench plan` compares."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from judgebench.config.paths import configs_dir
from judgebench.costing.estimate import Estimate, estimate_judging
from judgebench.costing.output_tokens import load_table
from judgebench.judge.call_plan import PlannedCall
from judgebench.judge.templates import load_template
from judgebench.models import Judges, JudgeSpec

# The bundled templates whose replies `plan` costs beside the chosen one: with a reason, the verdict
# only, the verdict held to a schema (structured output).
COMPARED_TEMPLATES = ("judge_default.toml", "judge_verdict_only.toml", "judge_verdict_schema.toml")


class TemplateCost(BaseModel):
    """The fixed design's calls with one template: what its replies cost, per judge."""

    template: str
    file: str
    chosen: bool
    estimates: list[Estimate]


def template_costs(
    calls: Sequence[PlannedCall],
    judges: Iterable[JudgeSpec],
    chosen_path: Path | None,
    observed: Mapping[tuple[str, str], tuple[float, int]] | None,
    *,
    catalog: Judges,
) -> list[TemplateCost]:
    """The design's cost with the chosen template and with each bundled one it is compared with."""
    judges = list(judges)
    table = load_table()  # configs/output_tokens.toml, read once for every row
    chosen = load_template(chosen_path)
    shown = str(chosen_path) if chosen_path is not None else "configs/templates/judge_default.toml"

    def rows(template_path: Path | None) -> list[Estimate]:
        template = load_template(template_path) if template_path is not None else chosen
        return estimate_judging(
            calls, calls, template, judges, catalog=catalog, observed=observed, table=table
        )

    out = [TemplateCost(template=chosen.name, file=shown, chosen=True, estimates=rows(None))]
    for name in COMPARED_TEMPLATES:
        path = configs_dir() / "templates" / name
        other = load_template(path)
        if other.name == chosen.name:
            continue
        out.append(
            TemplateCost(
                template=other.name, file=f"configs/templates/{name}", chosen=False, estimates=rows(path)
            )
        )
    return out
