"""A simulated judge (`sim:SCENARIO`) with planted biases, for the self-test and the test suite.

It reads the call's `context` (item, condition, order, gold letter, the template's name, the models
behind the answers) that real providers never see, and answers like a JSON judge. The planted length
and formatting biases read the responses from the prompt itself (sim_prompt.py), so a probe is
tested through the texts it actually made the judge see. Every draw is a pure function of (seed,
item, order, condition), so a run is reproducible and the en verdict a flip is measured against is
the same in every condition.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from judgebench.config.load import load_config
from judgebench.config.paths import configs_dir
from judgebench.errors import ConfigError, ConfigFileError, InputError
from judgebench.models.base import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderSettings,
    ProviderTraits,
)
from judgebench.models.failures import PermanentError
from judgebench.models.family_table import load_family_table
from judgebench.models.sim_prompt import has_markdown, shown_responses
from judgebench.records import Usage
from judgebench.records.condition_specs import PROBE_SEP
from judgebench.records.numbers import USER_NUMBERS, Share


class SimScenario(BaseModel):
    model_config = USER_NUMBERS

    seed: int = 0
    accuracy: dict[str, float] = {"en": 0.85}
    position_bias: dict[str, float] = {"en": 0.0}
    tie_rate: float = 0.0
    flip_rate: dict[str, float] = {}
    invalid_rate: float = 0.0
    tie_probe_tie: float = 0.9
    tie_probe_en_share: float = 0.5
    # one merit draw per item for both orders (a hard item is missed in both, as real judges do),
    # instead of one per order: the same marginals, far fewer order-inconsistent items
    item_level_errors: bool = False
    # one flip draw per item for both orders, flipping to the other output (a judge that changes its
    # mind about the item, not about the position): the flip rate as planted, no position effect
    item_level_flips: bool = False
    # planted probe sensitivities (issue 31), each a probability, all 0 (no bias) by default:
    # `length_bias`: the judge picks the longer response whenever the prompt shows it at least
    # `length_ratio` times as long (in characters) as the other;
    # `template_flip`: the verdict moves to the other response under any template but `home_template`
    # (the draw is salted with the template's name, so each paraphrase moves its own items);
    # `markdown_bias`: the judge picks the response with Markdown marks (headings, bullets, bold, code
    # fences, tables, links) when the prompt shows exactly one such response;
    # `self_preference`: the judge, of model family `family`, picks the answer whose model (the
    # items' chosen_model / rejected_model, configs/model_families.toml) is of its own family when
    # exactly one of the two is. Applied in that order to the verdict; a later pull wins.
    length_bias: Share = 0.0
    length_ratio: Annotated[float, Field(ge=1.0, allow_inf_nan=False)] = 1.5
    # which response the length bias pulls towards: the longer (the probe's bias) or the shorter (a
    # judge riding a benchmark whose gold answers are mostly the shorter ones, issue 47)
    length_prefers: Literal["longer", "shorter"] = "longer"
    template_flip: Share = 0.0
    home_template: str = "judge-default-v1"
    markdown_bias: Share = 0.0
    family: str | None = None
    self_preference: Share = 0.0
    # run-to-run sampling noise (`judgebench compare`): with `judge_seed` set, the judge itself (which
    # items it misses, where it answers "A") is drawn from `judge_seed`, and `seed` (the spec's
    # `/SEED`) is the run's: each call is redrawn from it with probability `sampling_noise`, as a judge
    # sampled at temperature > 0 answers an uncertain item differently on another day. Unset (the
    # default) the seed is the judge, as before.
    judge_seed: int | None = None
    sampling_noise: Share = 0.0

    @model_validator(mode="after")
    def _family_named(self) -> SimScenario:
        if self.self_preference > 0 and not self.family:
            raise ValueError(
                "self_preference needs the judge's `family` (a family of configs/model_families.toml)"
            )
        return self

    def draw_seed(self, *parts: object) -> str | int:
        """The seed one call's draws come from: the judge's own, or the run's for a redrawn call."""
        if self.judge_seed is None:
            return self.seed
        if self.sampling_noise > 0 and uniform(self.seed, *parts, "resample") < self.sampling_noise:
            return f"run/{self.seed}"
        return self.judge_seed

    def acc(self, condition: str) -> float:
        return self.accuracy.get(condition, self.accuracy.get("en", 0.85))

    def pos(self, condition: str) -> float:
        return self.position_bias.get(condition, self.position_bias.get("en", 0.0))


class SimFile(BaseModel):
    """configs/sim.toml: `[scenarios.NAME]` tables."""

    model_config = USER_NUMBERS

    scenarios: dict[str, SimScenario] = Field(default_factory=dict)


def load_scenario(name: str, path: Path | None = None) -> SimScenario:
    file = path or configs_dir() / "sim.toml"
    scenarios = load_config(file, SimFile).scenarios
    if name not in scenarios:
        raise ConfigFileError(f"no scenario '{name}'; defined: {', '.join(scenarios)}", path=str(file))
    return scenarios[name]


def uniform(*parts: object) -> float:
    """A deterministic U(0,1) draw from the given parts."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pair_letter(s: SimScenario, item: str, order: str, condition: str, gold: str) -> str:
    """The simulated verdict letter (A, B, Tie, or 'invalid') of one pair call."""
    seed = s.draw_seed(item, order, condition)

    def decide(cond: str, salt: str) -> str:
        if uniform(seed, item, order, salt, "tie") < s.tie_rate:
            return "Tie"
        if uniform(seed, item, order, salt, "pos") < s.pos(cond):
            return "A"
        correct = uniform(seed, item, "both" if s.item_level_errors else order, salt, "acc") < s.acc(cond)
        return gold if correct else ("B" if gold == "A" else "A")

    if uniform(seed, item, order, condition, "invalid") < s.invalid_rate:
        return "invalid"
    base = decide("en", "en")
    if condition == "en":
        return base
    if s.item_level_flips and base in ("A", "B"):
        if uniform(seed, item, "both", condition, "flip") < s.flip_rate.get(condition, 0.0):
            return "B" if base == "A" else "A"
    elif uniform(seed, item, order, condition, "flip") < s.flip_rate.get(condition, 0.0):
        # a planted language flip: any verdict other than the en one
        others = [v for v in ("A", "B", "Tie") if v != base]
        return others[0] if uniform(seed, item, order, condition, "which") < 0.5 else others[1]
    if condition in s.accuracy or condition in s.position_bias:
        return decide(condition, "en")  # same draws, the condition's own accuracy / bias
    return base


def probe_letter(s: SimScenario, item: str, order: str, condition: str) -> str:
    seed = s.draw_seed(item, order, condition, "probe")
    if uniform(seed, item, order, condition, "probe-tie") < s.tie_probe_tie:
        return "Tie"
    english_first = order.startswith("en_")
    picks_en = uniform(seed, item, order, condition, "probe-en") < s.tie_probe_en_share
    return "A" if picks_en == english_first else "B"


def language_of(condition: str) -> str:
    """The language a condition is in: a probe of a language (`zh+length`) is in that language, a
    probe of the source (`length`) reads as en through the scenario's defaults."""
    return condition.partition(PROBE_SEP)[0]


def _pick(letter: str, towards: str | None, draw: float, strength: float) -> str:
    return towards if towards is not None and draw < strength else letter


def probe_pull(
    s: SimScenario,
    ctx: Mapping[str, object],
    letter: str,
    shown: tuple[str, str] | None = None,
    families: tuple[str | None, str | None] = (None, None),
) -> str:
    """The planted template, length, formatting and self-preference effects on one pair verdict (A,
    B or Tie). `shown`: responses A and B as the prompt shows them; `families`: their models' families."""
    if letter not in ("A", "B", "Tie"):
        return letter
    item, order = str(ctx.get("item_id")), str(ctx.get("order"))
    seed = s.draw_seed(item, order, str(ctx.get("condition")))
    template = str(ctx.get("template") or s.home_template)
    draw = uniform(seed, item, order, template, "template")
    moved = template != s.home_template and draw < s.template_flip
    if moved and letter == "Tie":
        letter = "A" if uniform(seed, item, order, template, "template-which") < 0.5 else "B"
    elif moved:
        letter = "B" if letter == "A" else "A"
    if shown is not None and s.length_bias > 0.0:
        chars_a, chars_b = len(shown[0]), len(shown[1])
        if s.length_prefers == "shorter":  # the rule below then picks the shorter response
            chars_a, chars_b = chars_b, chars_a
        longer = "A" if chars_a >= s.length_ratio * max(chars_b, 1) else None
        longer = "B" if chars_b >= s.length_ratio * max(chars_a, 1) else longer
        letter = _pick(letter, longer, uniform(seed, item, order, "length"), s.length_bias)
    if shown is not None and s.markdown_bias > 0.0:
        marked_a, marked_b = has_markdown(shown[0]), has_markdown(shown[1])
        marked = None if marked_a == marked_b else ("A" if marked_a else "B")
        letter = _pick(letter, marked, uniform(seed, item, order, "markdown"), s.markdown_bias)
    if s.family and s.self_preference > 0.0:
        own_a, own_b = families[0] == s.family, families[1] == s.family
        own = None if own_a == own_b else ("A" if own_a else "B")
        letter = _pick(letter, own, uniform(seed, item, order, "self"), s.self_preference)
    return letter


class SimProvider(Provider):
    """`sim:SCENARIO` or `sim:SCENARIO/SEED`: scenarios live in configs/sim.toml."""

    name = "sim"
    # in process; it only judges: its answers are drawn from planted verdict rates, not written
    traits = ProviderTraits(in_process=True, translates=False)
    key_env = ()

    @classmethod
    def check_model(cls, model: str) -> None:
        scenario, _, seed = model.partition("/")
        try:
            load_scenario(scenario)
        except InputError as exc:
            raise ConfigError(f"sim:{model}: {exc}") from None
        if seed and not seed.lstrip("-").isdigit():
            raise ConfigError(f"sim:{model}: the part after '/' must be an integer seed")

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        super().__init__(model, settings)
        scenario, _, seed = model.partition("/")
        self.scenario = load_scenario(scenario)
        if seed:
            try:
                self.scenario = self.scenario.model_copy(update={"seed": int(seed)})
            except ValueError:
                raise InputError(f"sim:{model}: the part after '/' must be an integer seed") from None
        self.families = load_family_table()  # the answers' families, for a planted self-preference

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(logprobs=False, json_mode=True, temperature=True, chat=True, completion=False)

    def connection_key(self) -> str:
        return f"sim:{self.model}"

    def _seen(self, request: ModelRequest) -> tuple[tuple[str, str] | None, tuple[str | None, str | None]]:
        """What the probe pulls read: the shown responses (from the prompt) and their models' families."""
        s = self.scenario
        shown = shown_responses(request) if s.length_bias > 0 or s.markdown_bias > 0 else None
        if shown is None and (s.length_bias > 0 or s.markdown_bias > 0):
            raise PermanentError(
                "the simulated judge's length and Markdown biases read the responses from the prompt's "
                "boundary lines, and this prompt has none",
                provider="sim",
            )
        models = request.context.get("model_a"), request.context.get("model_b")
        families = (
            self.families.of_model(models[0] if isinstance(models[0], str) else None),
            self.families.of_model(models[1] if isinstance(models[1], str) else None),
        )
        return shown, families

    async def generate(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        item, order, cond = str(ctx.get("item_id")), str(ctx.get("order")), str(ctx.get("condition"))
        if ctx.get("kind") == "tie_probe":
            letter = probe_letter(self.scenario, item, order, cond)
        elif ctx.get("kind") == "pair" and ctx.get("gold") in ("A", "B"):
            letter = pair_letter(self.scenario, item, order, language_of(cond), str(ctx["gold"]))
            letter = probe_pull(self.scenario, ctx, letter, *self._seen(request))
        else:
            raise PermanentError("the simulated judge needs the judge stage's call context", provider="sim")
        if letter == "invalid":
            text = "I cannot decide between these two responses."
        else:
            text = json.dumps({"winner": letter, "confidence": 0.8, "reason": "simulated verdict"})
        prompt_chars = sum(len(m.content) for m in request.messages or []) + len(request.prompt or "")
        return ModelResponse(
            text=text,
            finish_reason="stop",
            usage=Usage(input_tokens=prompt_chars // 4, output_tokens=len(text) // 4),
            model=f"sim:{self.model}",
            raw={"simulated": True, "text": text},
            params_sent={"temperature": request.temperature, "max_tokens": request.max_tokens},
        )
