"""`judge --probes`: the probe conditions of a judge command, made when it plans (no model call) and
written to variants.jsonl under the judge lock, so they flow through the same plan, judge, report
and bbe path as languages."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgebench.conditions import SOURCE
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError
from judgebench.judge.templates import JudgeTemplate, load_template
from judgebench.probes.probe_registry import ProbeSpec, select_probes
from judgebench.probes.produce import make_probes
from judgebench.records import Condition, Item, Variant
from judgebench.records.manifest import ProbeEntry, TemplateEntry
from judgebench.store.run_folder import IndexedAppender, RunDir


@dataclass
class ProbePlan:
    """The probe conditions to plan, their variants, the templates of template-probe conditions and
    what the manifest records of each."""

    conditions: list[Condition] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    templates: dict[str, JudgeTemplate] = field(default_factory=dict)
    entries: dict[str, ProbeEntry] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def template_file(spec: ProbeSpec, name: str) -> Path:
    """A template probe's file: absolute, or relative to the `templates/` beside the probe's folder
    (configs/templates/ for configs/probes/), else to configs/templates/."""
    path = Path(name)
    if path.is_absolute():
        return path
    beside = Path(spec.path).parent.parent / "templates" / name if spec.path else None
    return beside if beside is not None and beside.exists() else configs_dir() / "templates" / name


def plan_probes(
    names: str | Sequence[str] | None,
    items: Sequence[Item],
    variants: Mapping[tuple[str, str], Variant],
    bases: Sequence[Condition | str],
) -> ProbePlan:
    """Every asked probe on every judged condition it applies to (en and the targets)."""
    specs = select_probes(names)
    if not specs:
        return ProbePlan()
    for spec in specs:
        if spec.needs_model:
            raise ConfigError(
                f"probe '{spec.name}' needs a model call; `judge --probes` makes only free ones"
            )
    batch = make_probes(items, variants, specs, bases)
    plan = ProbePlan(conditions=batch.conditions, variants=batch.variants, notes=batch.notes)
    by_name = {s.name: s for s in specs}
    for cond in batch.conditions:
        spec = by_name[str(cond.probe)]
        entry = ProbeEntry(probe=spec.name, base=str(cond.base))
        if cond.template is not None:
            file = template_file(spec, cond.template)
            template = load_template(file)
            plan.templates[cond.name] = template
            entry.template = TemplateEntry(name=template.name, hash=template.digest(), path=str(file))
        plan.entries[cond.name] = entry
    if not batch.conditions:
        plan.notes.append(f"--probes {','.join(s.name for s in specs)}: no probe condition could be made")
    return plan


def bases_of(include_source: bool, targets: Sequence[Condition]) -> list[Condition | str]:
    return [*([SOURCE] if include_source else []), *targets]


def write_probe_variants(run: RunDir, variants: Sequence[Variant]) -> int:
    """Append the probe variants variants.jsonl does not hold as they are (a changed probe file
    writes its new texts; the last line per item and condition wins)."""
    index = run.variants()
    known = index.latest()
    new = [v for v in variants if known.get((v.item_id, v.condition)) != v]
    if new:
        with IndexedAppender(index) as out:
            for variant in new:
                out.append(variant)
    return len(new)


def probe_neighbours(
    recorded: Mapping[str, ProbeEntry],
    available: Collection[str],
    neighbours: Sequence[str] | None,
    probes: Sequence[str] | None,
) -> list[str] | None:
    """The neighbour kinds of a run's A-BB calibration: `--neighbours` as given (or, in a run judged
    with probes, every kind but the probe conditions), plus the conditions of the `--probes` named
    (`all`: every probe the run holds). None: every kind, as before probes existed."""
    if not probes:
        if neighbours or not recorded:
            return list(neighbours) if neighbours else None
        return sorted(k for k in available if k not in recorded)
    held = list(dict.fromkeys(e.probe for e in recorded.values()))
    wanted = held if list(probes) == ["all"] else list(dict.fromkeys(probes))
    unknown = [p for p in wanted if p not in held]
    if unknown:
        raise ConfigError(
            f"--probes: this run was not judged with probe '{unknown[0]}'; it holds: "
            f"{', '.join(held) or 'none'} (judge --probes first)"
        )
    chosen = [c for c, e in recorded.items() if e.probe in wanted and c in available]
    base = list(neighbours) if neighbours else sorted(k for k in available if k not in recorded)
    return list(dict.fromkeys([*base, *chosen]))
