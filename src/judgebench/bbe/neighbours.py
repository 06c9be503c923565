"""Label-preserving neighbour generators (PROTOCOL §5) and re-judging of perturbed units.

Text generators work on any judge's inputs: formatting changes of one answer (markdown emphasis added or
stripped, bullets <-> sentences, whitespace), reordered rubric criteria, swapped answer order, and a
language switch taken from the run's variants. Fenced code blocks are never touched: a formatting
change must not change what an answer says. `perturb_unit` perturbs one unit; the judge room makes
its call (`judge.units`) and `execution.rejudge` judges it through the judge stage's execution
(cached, budgeted, batchable), as the reference's Algorithm 1 does, keeping every answer in the run's
`bbe_neighbours.jsonl`; the api (`api.bbe`) only orders these steps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from judgebench.errors import ConfigError
from judgebench.records import Item, Variant
from judgebench.store.run_folder import BBE_NEIGHBOURS

PerturbKind = Literal["formatting", "criteria"]
PERTURB_KINDS: tuple[str, ...] = ("formatting", "criteria")
NEIGHBOURS_FILE = BBE_NEIGHBOURS

_FENCE = re.compile(r"(```.*?```|~~~.*?~~~)", re.DOTALL)
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=\S)")


def _outside_code(text: str, func: Callable[[str], str]) -> str:
    """Apply `func` to the prose between fenced code blocks only."""
    parts = _FENCE.split(text)
    return "".join(part if i % 2 else func(part) for i, part in enumerate(parts))


def strip_emphasis(text: str) -> str:
    """Remove markdown bold/italic markers, keeping the words."""
    return _outside_code(text, lambda s: _EMPHASIS.sub(lambda m: m.group(2) or m.group(3) or "", s))


def add_emphasis(text: str, rng: np.random.Generator) -> str:
    """Bold the first sentence of one randomly chosen paragraph (not a heading, list marker or code)."""

    def apply(segment: str) -> str:
        paras = segment.split("\n\n")
        candidates = [
            i for i, p in enumerate(paras) if p.strip() and not p.lstrip().startswith(("#", "|", ">", "**"))
        ]
        if not candidates:
            return segment
        i = int(rng.choice(candidates))
        lead = len(paras[i]) - len(paras[i].lstrip())
        body = paras[i][lead:]
        first, sep, rest = body.partition("\n")
        sentence_split = _SENTENCE_END.split(first, maxsplit=1)
        head = sentence_split[0]
        tail = first[len(head) :]
        if _BULLET.match(head):
            return segment
        paras[i] = paras[i][:lead] + f"**{head.strip()}**" + tail + sep + rest
        return "\n\n".join(paras)

    return _outside_code(text, apply)


def bullets_to_sentences(text: str) -> str:
    """Turn each run of list lines into one paragraph of sentences."""

    def apply(segment: str) -> str:
        out: list[str] = []
        run: list[str] = []
        for line in segment.split("\n"):
            m = _BULLET.match(line)
            if m:
                item = m.group(1).strip()
                run.append(item if item.endswith((".", "!", "?", ":", ";")) else item + ".")
                continue
            if run:
                out.append(" ".join(run))
                run = []
            out.append(line)
        if run:
            out.append(" ".join(run))
        return "\n".join(out)

    return _outside_code(text, apply)


def sentences_to_bullets(text: str) -> str:
    """Turn a paragraph of two or more sentences into a bulleted list (the longest such paragraph)."""

    def apply(segment: str) -> str:
        paras = segment.split("\n\n")
        best, best_n = -1, 1
        for i, p in enumerate(paras):
            if "\n" in p.strip() or _BULLET.match(p.strip() or "x"):
                continue
            n = len(_SENTENCE_END.split(p.strip()))
            if n > best_n:
                best, best_n = i, n
        if best < 0:
            return segment
        sentences = _SENTENCE_END.split(paras[best].strip())
        paras[best] = "\n".join(f"- {s.strip()}" for s in sentences)
        return "\n\n".join(paras)

    return _outside_code(text, apply)


def change_whitespace(text: str, rng: np.random.Generator) -> str:
    """Blank lines between lines of prose, or collapsed blank lines and doubled spaces (seeded choice)."""

    def spread(segment: str) -> str:
        return re.sub(r"(?<=\S)\n(?=\S)", "\n\n", segment)

    def squeeze(segment: str) -> str:
        return re.sub(r"\n{2,}", "\n", re.sub(r"[ \t]{2,}", " ", segment))

    first, second = (spread, squeeze) if rng.random() < 0.5 else (squeeze, spread)
    out = _outside_code(text, first)
    if out == text:
        out = _outside_code(text, second)
    if out == text:
        out = text.rstrip() + "\n\n" if not text.endswith("\n\n") else text.rstrip()
    return out


FORMATTING_OPS: tuple[str, ...] = ("emphasis", "bullets", "whitespace")


def formatting_variant(text: str, rng: np.random.Generator) -> tuple[str, str]:
    """One formatting change of `text` that alters its markup but not its content, and its name.

    Tries the operations in a seeded random order and returns the first that changes the text:
    emphasis (stripped when present, else added), bullets (list -> sentences when there is a list,
    else sentences -> list), whitespace.
    """
    for op in rng.permutation(FORMATTING_OPS):
        if op == "emphasis":
            stripped = strip_emphasis(text)
            out, name = (
                (stripped, "emphasis_stripped")
                if stripped != text
                else (add_emphasis(text, rng), "emphasis_added")
            )
        elif op == "bullets":
            merged = bullets_to_sentences(text)
            out, name = (
                (merged, "bullets_to_sentences")
                if merged != text
                else (sentences_to_bullets(text), "sentences_to_bullets")
            )
        else:
            out, name = change_whitespace(text, rng), "whitespace"
        if out != text:
            return out, name
    return text, "unchanged"


def reorder_criteria(rubric: str, rng: np.random.Generator) -> str:
    """Shuffle the numbered or bulleted criteria of a rubric (renumbering numbered ones); other lines stay."""
    lines = rubric.split("\n")
    idx = [i for i, line in enumerate(lines) if _BULLET.match(line)]
    if len(idx) < 2:
        return rubric
    # the longest run of consecutive criteria lines
    runs: list[list[int]] = [[idx[0]]]
    for i in idx[1:]:
        if i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    block = max(runs, key=len)
    if len(block) < 2:
        return rubric
    items = [lines[i] for i in block]
    order = rng.permutation(len(items))
    if list(order) == list(range(len(items))):
        order = np.roll(order, 1)
    shuffled = [items[k] for k in order]
    numbered = re.compile(r"^(\s*)(\d+)([.)])(\s+)(.*)$")
    if all(numbered.match(s) for s in items):
        renumbered = []
        for n, s in enumerate(shuffled, start=1):
            m = numbered.match(s)
            assert m is not None
            renumbered.append(f"{m.group(1)}{n}{m.group(3)}{m.group(4)}{m.group(5)}")
        shuffled = renumbered
    for pos, line in zip(block, shuffled, strict=True):
        lines[pos] = line
    return "\n".join(lines)


def swap_order(output_a: str, output_b: str) -> tuple[str, str]:
    """The swapped presentation: its verdict is still read as 'P(output_1 preferred)'."""
    return output_b, output_a


def language_switch(
    item_id: str, condition: str, variants: Mapping[tuple[str, str], Variant]
) -> Variant | None:
    """The run's variant of the item in `condition` (e.g. `ls`), or None when the run has none."""
    return variants.get((item_id, condition))


@dataclass(frozen=True)
class Perturbation:
    item_id: str
    order: str
    field: str  # "output_1", "output_2" or "instruction"
    operation: str
    instruction: str
    output_1: str
    output_2: str


def perturb_item(item: Item, kind: str, rng: np.random.Generator) -> Perturbation | None:
    """A perturbed copy of the item for one unit (order set by the caller); None when nothing changes."""
    if kind == "formatting":
        fields = ["output_1", "output_2"]
        first = int(rng.integers(0, 2))
        for field in (fields[first], fields[1 - first]):
            new, op = formatting_variant(getattr(item, field), rng)
            if new != getattr(item, field):
                texts = {"output_1": item.output_1, "output_2": item.output_2, field: new}
                return Perturbation(
                    item.id, "", field, op, item.instruction, texts["output_1"], texts["output_2"]
                )
        return None
    if kind == "criteria":
        new = reorder_criteria(item.instruction, rng)
        if new == item.instruction:
            return None
        return Perturbation(
            item.id, "", "instruction", "criteria_reordered", new, item.output_1, item.output_2
        )
    raise ConfigError(f"unknown perturbation '{kind}'; choose one of {', '.join(PERTURB_KINDS)}")


def perturb_unit(item: Item, order: str, kind: str, seed: int) -> Perturbation | None:
    """`perturb_item` for one unit with its own generator (seed, item, order): the same seed gives
    the same texts, so a rerun asks the same calls and hits the cache."""
    rng = np.random.default_rng([seed, *item.id.encode("utf-8"), 0 if order == "orig" else 1])
    return perturb_item(item, kind, rng)
