"""The Study: what a study is about (dataset, items, conditions, judges, template, probes), declared
once and passed to every stage.

Each stage's request extends it (`JudgeRequest(Study)`, `TranslateRequest`, `PipelineRequest`,
`PlanRequest`), so a field is declared here once and means the same in every stage; `conditions`
is parsed here once (`judgebench.conditions.parse_names`), whether it came as a comma string from a
flag, a list from a library user, or the manifest of a run (`Study.from_manifest`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, Field

from judgebench.conditions import SOURCE, parse_names
from judgebench.config import defaults
from judgebench.errors import ConfigError
from judgebench.records.manifest import Manifest
from judgebench.records.numbers import USER_NUMBERS

parse_conditions = parse_names  # the one parser of a `--conditions` value, for the CLI and library users

S = TypeVar("S", bound="StudyData")


# a `--conditions` value (`en,zh,ls`) or a list, read by the one parser into names, in order, each once
def _names(value: Any) -> list[str] | None:
    try:
        return parse_names(value)
    except ConfigError as exc:  # pydantic reports a ValueError as the field's error
        raise ValueError(str(exc)) from None


ConditionNames = Annotated[list[str] | None, BeforeValidator(_names)]


class StudyData(BaseModel):
    """What a study is judged on: the dataset, the items and the conditions (translate's part of the
    Study). None means the stage's own default (the run's dataset, its default conditions, every item)."""

    model_config = USER_NUMBERS

    # a registered dataset name (`judgebench data list`) or a file; None: the run's recorded one
    dataset: str | None = None
    data_dir: str | None = None
    subset: str | None = None  # one subset and those below it, in every stage
    limit: int | None = Field(default=None, ge=1)  # the first N items (after --subset)
    # condition names (en is the source); None: the stage's default
    conditions: ConditionNames = None

    def targets(self) -> list[str]:
        """The named conditions other than the source (empty when none were named)."""
        return [c for c in self.conditions or [] if c != SOURCE]

    def request(self, stage: type[S], fields: Mapping[str, Any] | None = None) -> S:
        """A stage's request for this study: the study's fields that the stage takes, then `fields`
        (the stage's own, or a study field the stage sets otherwise), validated."""
        mine = self.model_dump(include=set(Study.model_fields))
        shared = {k: v for k, v in mine.items() if k in stage.model_fields}
        return stage.model_validate({**shared, **(fields or {})})


class Study(StudyData):
    """A study: its data (`StudyData`), its judges, their template and the probes judged beside the
    languages; built once from flags (a stage request extends it) or from a run's manifest."""

    models: list[str] = Field(default_factory=lambda: [defaults.MODEL])
    template_path: Path | None = None  # judge template TOML; None: the bundled one
    # probes of configs/probes/ (`length,format` or `all`), judged beside the languages
    probes: str | list[str] | None = None

    def study(self) -> Study:
        """Only the study's own fields (a stage's request carries more)."""
        return Study.model_validate(self.model_dump(include=set(Study.model_fields)))

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> Study:
        """The study a run's manifest records: its dataset, the conditions it judged (else those it
        translated, with en), its judges, template and probes. A later stage continues this study."""
        ds = manifest.dataset
        stages = manifest.stages
        judged = stages.judge
        translated = stages.translate
        # the languages, in the configured order (zh before ls); a probe's conditions are its own
        held = [SOURCE, *(translated.condition_names() if translated else [])]
        conditions: list[str] | None = None
        if judged is not None and judged.conditions:
            conditions = [c for c in held if c in judged.conditions]
        elif translated is not None:
            conditions = held
        return cls(
            dataset=ds.spec if ds else None,
            data_dir=ds.data_dir if ds else None,
            subset=translated.subset if translated else None,
            limit=translated.limit if translated else None,
            conditions=conditions,
            models=list(judged.judges) if judged else [defaults.MODEL],
            template_path=Path(p) if judged and (p := judged.template.user_path()) else None,
            probes=sorted(judged.probes) or None if judged else None,
        )
