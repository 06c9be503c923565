"""Probe conditions made from the items as data: one variant per item, probe instance and base
condition (`length` from en, `zh+length` from the zh variant), with the label unchanged.

Deterministic and free (no built-in transform calls a model), so `judge --probes` makes them when it
plans and appends them to variants.jsonl (source `probe:NAME`) where the report and the item
explorer read every other condition's texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from judgebench.conditions import SOURCE
from judgebench.probes.probe_registry import ProbeSpec, ProbeStep
from judgebench.probes.transforms import TextContext, TransformError, apply_steps
from judgebench.records import Condition, Item, Variant
from judgebench.records.condition_specs import probe_condition

SOURCE_LANGUAGE = "English"


@dataclass
class ProbeBatch:
    """What probing made: the variants, the conditions to plan, and notes on what was skipped."""

    variants: list[Variant] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    # probe condition -> (probe name, base condition)
    origin: dict[str, tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _targets(step: ProbeStep, item: Item) -> list[str] | None:
    """The output fields a step rewrites on this item; None when it needs a label the item lacks."""
    out: list[str] = []
    for name in step.fields:
        if name in ("chosen", "rejected"):
            if item.label not in (1, 2):
                return None
            gold = f"output_{item.label}"
            out.append(gold if name == "chosen" else f"output_{3 - item.label}")
        elif name == "outputs":
            out += ["output_1", "output_2"]
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def probe_texts(
    spec: ProbeSpec, instance: str, item: Item, base: str, texts: Mapping[str, str]
) -> dict[str, str] | str:
    """The probed texts of one item (instruction, output_1, output_2), or why it cannot be made."""
    out = dict(texts)
    for step in spec.steps:
        if step.transform == "template":
            continue
        fields = _targets(step, item)
        if fields is None:
            return "unlabelled (the probe rewrites the chosen/rejected output)"
        for name in fields:
            ctx = TextContext(item_id=item.id, probe=instance, field=name, language=base)
            try:
                out[name] = apply_steps(out[name], [(step.transform, step.params)], ctx)
            except TransformError as exc:
                return str(exc)
    return out


def _base_texts(item: Item, base: str, variants: Mapping[tuple[str, str], Variant]) -> dict[str, str] | None:
    source: Item | Variant | None = item if base == SOURCE else variants.get((item.id, base))
    if source is None:
        return None
    return {"instruction": source.instruction, "output_1": source.output_1, "output_2": source.output_2}


def make_probes(
    items: Sequence[Item],
    variants: Mapping[tuple[str, str], Variant],
    probes: Sequence[ProbeSpec],
    bases: Sequence[Condition | str],
) -> ProbeBatch:
    """Every probe instance on every base condition it applies to (`bases`: en as the string, the
    judged targets as Conditions). An item lacking the base variant, a label the probe needs, or
    anything to change (with `skip_unchanged`) gets no variant and a note counts it."""
    batch = ProbeBatch()
    for spec in probes:
        for base in bases:
            name = base if isinstance(base, str) else base.name
            language = SOURCE_LANGUAGE if isinstance(base, str) else base.language
            if not spec.applies_to(name):
                continue
            for instance in spec.instances():
                cond = probe_condition(name, instance)
                made, skipped = _instance_variants(spec, (instance, cond, name), items, variants)
                if made:
                    batch.variants += made
                    batch.conditions.append(
                        Condition(
                            name=cond, language=language, kind="probe", probe=spec.name, base=name,
                            template=spec.template_of(instance), tie_probe=False,
                        )
                    )  # fmt: skip
                    batch.origin[cond] = (spec.name, name)
                for why, count in skipped.items():
                    batch.notes.append(f"{cond}: {count} item(s) without a variant: {why}")
    return batch


def _instance_variants(
    spec: ProbeSpec,
    names: tuple[str, str, str],
    items: Sequence[Item],
    variants: Mapping[tuple[str, str], Variant],
) -> tuple[list[Variant], dict[str, int]]:
    """One instance's variants on one base; `names` = (instance, its condition, the base)."""
    instance, cond, base = names
    made: list[Variant] = []
    skipped: dict[str, int] = {}
    for item in items:
        texts = _base_texts(item, base, variants)
        if texts is None:
            skipped[f"no '{base}' variant"] = skipped.get(f"no '{base}' variant", 0) + 1
            continue
        probed = probe_texts(spec, instance, item, base, texts)
        if isinstance(probed, str):
            skipped[probed] = skipped.get(probed, 0) + 1
            continue
        if spec.skip_unchanged and not spec.templates() and probed == texts:
            skipped["nothing to change"] = skipped.get("nothing to change", 0) + 1
            continue
        made.append(Variant(item_id=item.id, condition=cond, source=f"probe:{spec.name}", **probed))
    return made, skipped
