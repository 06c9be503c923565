"""A resumed judge stage asks what its first calls asked, or is refused (issue 29).

A resume judges only the calls without a verdict. Had it changed what a call means (another template,
temperature or max_tokens, another model behind a judge name, the completion form of a base model),
the items judged before would count as done and the rest would be judged the new way: one judge made
of two settings, with nothing in the manifest or the report to say so. Each judge's `CallMeaning` is
recorded in the manifest; a resume that differs is refused before anything runs, naming what changed
and the ways out (the recorded settings, a new run folder, or a new judge name for the new settings,
which makes it a separate judge).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgebench.errors import ConfigError
from judgebench.judge.templates import JudgeTemplate
from judgebench.models import JudgeSpec
from judgebench.records.manifest import CallMeaning
from judgebench.store.run_folder import RunDir


def call_meaning(
    spec: str, defaults: Mapping[str, Any], completion: bool, template: JudgeTemplate
) -> CallMeaning:
    """What a judge (its spec, judges.toml request defaults, completion form) is asked with `template`."""
    return CallMeaning(
        spec=spec,
        template=template.name,
        template_hash=template.digest(),
        temperature=defaults.get("temperature"),
        max_tokens=defaults.get("max_tokens"),
        completion=completion,
    )


def judge_meaning(judge: JudgeSpec, template: JudgeTemplate) -> CallMeaning:
    return call_meaning(judge.spec.text, judge.request.given(), judge.traits.completion_only, template)


def refuse_changed_meaning(run: RunDir, judges: Mapping[str, JudgeSpec], template: JudgeTemplate) -> None:
    """Refuse to resume a judge whose recorded calls meant something else than this command's."""
    stage = run.manifest().stages.judge
    judged: set[str] | None = None
    for name, judge in judges.items():
        now = judge_meaning(judge, template)
        entry = stage.judges.get(name) if stage is not None else None
        if entry is not None and entry.meaning is not None:
            changes = entry.meaning.changes(now)
        elif entry is not None and stage is not None:  # a run written before meanings were recorded:
            old = stage.template  # its template by name (older releases hashed templates otherwise)
            changes = [] if old.name == now.template else [f"template {old.name} -> {now.template}"]
        else:  # no entry yet (a first run killed before it was recorded): the judgments' template
            if judged is None:
                judged = {f"{j.judge}\0{j.template}" for j in run.judgments().latest().values()}
            olds = sorted(
                {t.split("\0", 1)[1] for t in judged if t.split("\0", 1)[0] == name} - {now.template}
            )
            changes = [f"template {old} -> {now.template}" for old in olds if old != "None"]
        if changes:
            raise ConfigError(
                f"run {run.path}: judge {name} was judged here with other settings ({'; '.join(changes)}): "
                "resuming would make one judge of two settings, so nothing was called. Rerun with the "
                "settings the run recorded (manifest.json, stages.judge), judge into a new --run folder, "
                "or give the new settings their own judge name in configs/judges.toml (a separate judge)"
            )
