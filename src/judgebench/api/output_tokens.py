"""Output tokens per judgment, by judge and template: what cost estimates charge for a reply.

The reply is the part of a judgment's cost a template decides (a reason is 60-80 tokens, a bare
verdict about 15), so estimates must not charge one fixed figure for every template. Figures come,
in this order, from a finished run's own judgments (`plan --from-run`), from measurements stored in
configs/output_tokens.toml by scripts/bench_output_tokens.py, from a completion-only judge's
one-letter completion form, and from the file's stated assumptions; each figure names its source.
"""

from __future__ import annotations

import statistics
import tomllib
from collections import defaultdict
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgebench.errors import InputError
from judgebench.judge.templates import JudgeTemplate
from judgebench.models.config import resolve_judge
from judgebench.paths import configs_dir
from judgebench.records import Judgment
from judgebench.rundir import JUDGMENTS, RunDir, last_per_key, read_jsonl

# The line below which scripts/bench_output_tokens.py --write rewrites configs/output_tokens.toml.
MEASURED_MARKER = (
    "# --- measured by scripts/bench_output_tokens.py (rewritten by --write; edit above this line) ---"
)
# The completion form asks for this many tokens (JudgeTemplate.render): a verdict letter.
COMPLETION_TOKENS = 2


class MeasuredEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge: str
    template: str
    output_tokens: float = Field(ge=0)
    judgments: int = Field(ge=1)
    max: int | None = None
    ran_to_max_tokens: float | None = None
    measured: str = ""


class OutputTokenTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    assumed: dict[str, float]
    measured: list[MeasuredEntry] = Field(default_factory=list)


class OutputTokens(BaseModel):
    """Output tokens per judgment for one judge and template, and where the figure comes from."""

    judge: str
    template: str
    per_judgment: float
    source: str


def measured_path() -> Path:
    return configs_dir() / "output_tokens.toml"


@cache
def _table(path: Path) -> OutputTokenTable:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        table = OutputTokenTable.model_validate(data)
    except FileNotFoundError:
        raise InputError("output-token table not found", path=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=str(path)) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(err["msg"], path=str(path), field=".".join(str(x) for x in err["loc"])) from None
    if "default" not in table.assumed:
        raise InputError("[assumed] needs a 'default' figure", path=str(path), field="assumed.default")
    return table


def load_table(path: Path | None = None) -> OutputTokenTable:
    return _table((path or measured_path()).resolve())


def _model_of(judge: str) -> tuple[str, str]:
    """(provider, model) of a judge spec or judges.toml name: `local` and `local:gemma3-270m` agree."""
    spec = resolve_judge(judge)[0]
    return spec.provider, spec.model


def run_figures(run_dir: str | Path) -> dict[tuple[str, str], tuple[float, int]]:
    """(judge, template name) -> (mean output tokens, judgments) over a run's answered judgments."""
    run = RunDir(run_dir)
    path = run.file(JUDGMENTS)
    if not path.exists():
        raise InputError("the run has no judgments to measure replies from", path=str(path))
    tokens: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j in last_per_key(read_jsonl(path, Judgment), lambda j: j.call_key()).values():
        if j.raw is not None and j.usage is not None and j.template:
            tokens[(j.judge, j.template)].append(j.usage.output_tokens)
    return {key: (statistics.fmean(v), len(v)) for key, v in tokens.items()}


def output_tokens_for(
    judge: str,
    template: JudgeTemplate,
    *,
    completion: bool,
    observed: Mapping[tuple[str, str], tuple[float, int]] | None = None,
    table: OutputTokenTable | None = None,
) -> OutputTokens:
    """The output tokens one judgment of `judge` with `template` is costed at, and why."""
    table = table or load_table()
    found = (observed or {}).get((judge, template.name))
    if found is not None:
        mean, n = found
        return OutputTokens(
            judge=judge, template=template.name, per_judgment=mean, source=f"the run's {n} judgments"
        )
    model = _model_of(judge)
    for entry in table.measured:
        if entry.template == template.name and _model_of(entry.judge) == model:
            return OutputTokens(
                judge=judge,
                template=template.name,
                per_judgment=entry.output_tokens,
                source=f"measured, {entry.judgments} judgments ({entry.measured})".replace(" ()", ""),
            )
    if completion:
        return OutputTokens(
            judge=judge,
            template=template.name,
            per_judgment=COMPLETION_TOKENS,
            source="the completion form's verdict letter",
        )
    figure = table.assumed.get(template.name)
    name = template.name if figure is not None else "default"
    per = min(figure if figure is not None else table.assumed["default"], template.max_tokens)
    return OutputTokens(judge=judge, template=template.name, per_judgment=per, source=f"assumed ({name})")
