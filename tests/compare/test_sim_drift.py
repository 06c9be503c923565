"""The simulated judge's run-to-run noise (`judge_seed` + `sampling_noise`): two seeds of one judge
differ on about the planted share of calls, a scenario without it is unchanged by the new fields."""

from __future__ import annotations

import pytest

from judgebench.errors import InputError
from judgebench.models.sim import SimScenario, load_scenario, pair_letter, probe_letter

ITEMS = [f"i{n}" for n in range(4000)]


def _letters(s: SimScenario, condition: str = "en") -> list[str]:
    return [pair_letter(s, item, "orig", condition, "A" if n % 2 else "B") for n, item in enumerate(ITEMS)]


def test_two_seeds_of_one_judge_differ_only_by_the_sampling_noise() -> None:
    s = load_scenario("drift-stable")
    one = _letters(s.model_copy(update={"seed": 1}))
    two = _letters(s.model_copy(update={"seed": 2}))
    changed = sum(a != b for a, b in zip(one, two, strict=True)) / len(ITEMS)
    # a call differs only when one of the runs redrew it (2 x 5%) and the redraw answered otherwise
    assert 0.005 < changed < 0.06
    # the same judge without noise: identical runs whatever the seed
    quiet = s.model_copy(update={"sampling_noise": 0.0})
    assert _letters(quiet.model_copy(update={"seed": 1})) == _letters(quiet.model_copy(update={"seed": 9}))


def test_without_a_judge_seed_the_seed_is_the_judge() -> None:
    """The default: another seed is another judge (about 2 x 0.85 x 0.15 of verdicts differ), and the
    draws are those of the scenario as it was before the noise fields existed."""
    s = SimScenario(accuracy={"en": 0.85}, position_bias={"en": 0.0})
    one, two = _letters(s.model_copy(update={"seed": 1})), _letters(s.model_copy(update={"seed": 2}))
    assert sum(a != b for a, b in zip(one, two, strict=True)) / len(ITEMS) > 0.2
    assert s.draw_seed("i1", "orig", "en") == s.seed
    noisy = s.model_copy(update={"judge_seed": 5, "sampling_noise": 1.0})
    assert noisy.draw_seed("i1", "orig", "en") == f"run/{s.seed}"
    assert probe_letter(noisy, "i1", "en_zh", "zh") in ("A", "B", "Tie")


def test_the_changed_judge_moves_only_its_planted_condition() -> None:
    stable = load_scenario("drift-stable").model_copy(update={"seed": 1})
    worse = load_scenario("drift-worse").model_copy(update={"seed": 1})
    assert _letters(stable, "en") == _letters(worse, "en")  # same judge draws, same noise seed
    zh_changed = sum(a != b for a, b in zip(_letters(stable, "zh"), _letters(worse, "zh"), strict=True))
    assert zh_changed / len(ITEMS) > 0.2


def test_sampling_noise_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="less than or equal to 1"):
        SimScenario(judge_seed=1, sampling_noise=1.5)
    with pytest.raises(InputError, match="no scenario"):
        load_scenario("drift-nothing")
