"""Which family a judge belongs to (self-preference, issue 31): its spec resolved through the family
table. A simulated judge names its family in its scenario, since `sim:NAME` says nothing of a maker."""

from __future__ import annotations

from judgebench.errors import ConfigError, InputError
from judgebench.models.provider_registry import ModelSpec, provider_class
from judgebench.models.sim import SimProvider, load_scenario
from judgebench.records.family_names import FamilyTable


def judge_family(judge: str, table: FamilyTable, spec: str | None = None) -> str | None:
    """The family of a judge (its recorded spec if known, else its name read as a spec); None when
    neither names a known maker, or the spec cannot be read (an imported results file's judge)."""
    text = spec or judge
    try:
        parsed = ModelSpec.parse(text)
    except ConfigError:
        return table.of_model(text)
    if provider_class(parsed.provider) is SimProvider:  # the registry says which class serves it
        try:
            return load_scenario(parsed.model.partition("/")[0]).family
        except InputError:
            return None
    return table.of_judge(parsed.provider, parsed.model)
