"""The call plan of Judge-LS (PROTOCOL §3): per judge, item, condition and order one pair call,
plus translation-equivalent tie-probes. Each planned call has a stable key; a run is complete when
every key has a record with a verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from judgebench.conditions import SOURCE, Condition
from judgebench.judge.templates import JudgeTemplate
from judgebench.records import CallKey, Item, Kind, Perturbation, Variant
from judgebench.records.family_names import answer_models

# A re-ask is recorded under the condition `repeat-i` (the neighbours file's format, which bbe, old
# runs and `judgebench select` read); in memory it is a planned call of the repeat kind (`repeat`).
REPEAT_PREFIX = "repeat-"


def repeat_condition(index: int) -> str:
    """The condition a run's files name the `index`-th re-ask of a unit by (`repeat-1`, ...)."""
    return f"{REPEAT_PREFIX}{index}"


@dataclass(frozen=True, slots=True)  # slots: a million-call plan holds no dict per call
class PlannedCall:
    judge: str
    item_id: str
    subset: str
    kind: Kind
    condition: str
    order: str
    label: int | None
    instruction: str
    output_a: str
    output_b: str
    language: str | None
    # set on bbe's re-judged neighbours: what was changed, recorded with the judgment
    perturbation: Perturbation | None = None
    # the template probe's calls: judged under this template instead of the run's
    template: JudgeTemplate | None = field(default=None, compare=False, hash=False)
    # the models behind output_1 and output_2 (the items' chosen/rejected model), for a simulated
    # judge's planted self-preference; (None, None) when the data names none
    models: tuple[str | None, str | None] = field(default=(None, None), compare=False, hash=False)
    # a repeat call (`judge --repeats`, bbe's --repeats): the `repeat`-th re-ask of the identical
    # input of `condition` (en), a call of its own that the cache does not answer; 0: a judgment
    repeat: int = 0

    @property
    def asks(self) -> Literal["judgment", "repeat"]:
        """What the call is for: a judgment of the plan, or a re-ask measuring the judge's jitter."""
        return "repeat" if self.repeat else "judgment"

    @property
    def recorded_condition(self) -> str:
        """The condition the call's record names: a repeat's is `repeat-i` (the files' format)."""
        return repeat_condition(self.repeat) if self.repeat else self.condition

    @property
    def key(self) -> CallKey:
        return CallKey(self.judge, self.item_id, self.kind, self.recorded_condition, self.order)

    def verdict_for(self, winner: str) -> str:
        """Map the judge's letter to the INTERFACE verdict (output number, or probe language)."""
        if winner == "invalid":
            return "invalid"
        if winner == "Tie":
            return "tie"
        if self.kind == "pair":
            first = "1" if self.order == "orig" else "2"
            second = "2" if self.order == "orig" else "1"
            return first if winner == "A" else second
        shown_first, shown_second = self.order.split("_", 1)
        return shown_first if winner == "A" else shown_second

    def context(self) -> dict[str, object]:
        """What a simulated judge may know (never sent to a real provider)."""
        gold: str | None = None
        if self.kind == "pair" and self.label in (1, 2):
            gold = "A" if (self.label == 1) == (self.order == "orig") else "B"
        return {
            "item_id": self.item_id,
            "subset": self.subset,
            "kind": self.kind,
            "condition": self.recorded_condition,  # a simulated judge draws each re-ask anew
            "order": self.order,
            "label": self.label,
            "gold": gold,
            "chars_a": len(self.output_a),
            "chars_b": len(self.output_b),
            "model_a": self.models[0] if self.order == "orig" else self.models[1],
            "model_b": self.models[1] if self.order == "orig" else self.models[0],
        }


def _texts(item: Item, variant: Variant | None) -> tuple[str, str, str]:
    source = variant if variant is not None else item
    return source.instruction, source.output_1, source.output_2


def stand_in_variants(items: Sequence[Item], targets: Sequence[Condition]) -> dict[tuple[str, str], Variant]:
    """Each item's en text standing in for its target variants, to plan and price judging before
    anything is translated (a translation is about as long as its source): `plan`, `judge --dry-run`
    and `run --dry-run` plan the same calls from it, tie-probes included, so they agree."""
    return {
        (i.id, c.name): Variant(
            item_id=i.id,
            condition=c.name,
            instruction=i.instruction,
            output_1=i.output_1,
            output_2=i.output_2,
        )
        for i in items
        for c in targets
    }


def ahead_variants(
    items: Sequence[Item], targets: Sequence[Condition], carried: Mapping[str, Sequence[Variant]]
) -> dict[tuple[str, str], Variant]:
    """The variants to plan judging with before a run holds any: the dataset's own where it carries
    the condition (M-RewardBench's languages, `Dataset.variants`: exact, an item missing in a language
    is not planned in it), the en text standing in for the others (`stand_in_variants`). `plan`,
    `judge --dry-run` and `run --dry-run` plan from it in memory, with no run folder."""
    chosen = {i.id for i in items}
    own = {(v.item_id, c.name): v for c in targets for v in carried.get(c.name, ()) if v.item_id in chosen}
    return {**stand_in_variants(items, [c for c in targets if c.name not in carried]), **own}


def plan_calls(
    items: Sequence[Item],
    variants: Mapping[tuple[str, str], Variant],
    conditions: Sequence[Condition],
    judges: Iterable[str],
    *,
    include_source: bool = True,
    tie_probes: bool = True,
    templates: Mapping[str, JudgeTemplate] | None = None,
) -> tuple[list[PlannedCall], list[str]]:
    """All planned calls, and notes on what could not be planned (an item without a variant).
    `templates`: the template a condition's calls use instead of the run's (the template probe)."""
    calls: list[PlannedCall] = []
    notes: list[str] = []
    judge_list = list(judges)
    cond_names = ([SOURCE] if include_source else []) + [c.name for c in conditions]
    by_name = {c.name: c for c in conditions}
    for item in items:
        models = answer_models(item)  # one item's, for every judge, order and condition
        for cond_name in cond_names:
            variant = None if cond_name == SOURCE else variants.get((item.id, cond_name))
            if cond_name != SOURCE and variant is None:
                if by_name[cond_name].kind != "probe":  # a probe's skipped items are counted by it
                    notes.append(
                        f"{item.id}: no '{cond_name}' variant; its {cond_name} calls are not planned"
                    )
                continue
            instruction, out1, out2 = _texts(item, variant)
            language = "English" if cond_name == SOURCE else by_name[cond_name].language
            template = (templates or {}).get(cond_name)
            for judge in judge_list:
                for order, (a, b) in (("orig", (out1, out2)), ("swap", (out2, out1))):
                    calls.append(
                        PlannedCall(
                            judge,
                            item.id,
                            item.subset,
                            "pair",
                            cond_name,
                            order,
                            item.label,
                            instruction,
                            a,
                            b,
                            language,
                            template=template,
                            models=models,
                        )
                    )
        if not tie_probes or item.label not in (1, 2):
            continue
        for cond in conditions:
            if not cond.tie_probe:
                continue
            variant = variants.get((item.id, cond.name))
            if variant is None:
                continue
            gold_en = item.output_1 if item.label == 1 else item.output_2
            gold_t = variant.output_1 if item.label == 1 else variant.output_2
            for judge in judge_list:
                for order, (a, b) in (
                    (f"{SOURCE}_{cond.name}", (gold_en, gold_t)),
                    (f"{cond.name}_{SOURCE}", (gold_t, gold_en)),
                ):
                    calls.append(
                        PlannedCall(
                            judge,
                            item.id,
                            item.subset,
                            "tie_probe",
                            cond.name,
                            order,
                            item.label,
                            variant.instruction,
                            a,
                            b,
                            cond.language,
                        )
                    )
    return calls, notes
