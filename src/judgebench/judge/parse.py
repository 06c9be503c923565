"""Reading a verdict from the judge's reply, and only from the reply (PROTOCOL §3).

JSON first (the last JSON object with a `winner` key; JSON verdicts that disagree make the reply
invalid), then tolerant fallbacks on the reply text.
The candidate outputs are never parsed: they reach this module only inside the judge's own words.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from judgebench.judge.templates import AnswerFormat, JudgeTemplate
from judgebench.models.base import TokenLogprob
from judgebench.records import Winner

_A_WORDS = re.compile(
    r"^\s*(?:\[\[)?\s*(?:(?:response|output|answer|assistant|model|candidate)\s*)?[\(\[]?\s*a\s*[\)\]]?\s*(?:\]\])?\s*[.!]?\s*$",
    re.IGNORECASE,
)
_B_WORDS = re.compile(
    r"^\s*(?:\[\[)?\s*(?:(?:response|output|answer|assistant|model|candidate)\s*)?[\(\[]?\s*b\s*[\)\]]?\s*(?:\]\])?\s*[.!]?\s*$",
    re.IGNORECASE,
)
_TIE_WORDS = re.compile(
    # PROTOCOL §3: tie, draw, equal -> Tie; "both", "neither" or "C" are not verdicts (invalid)
    r"^\s*(?:\[\[)?\s*(?:tie|draw|equal|equally good)\s*(?:\]\])?\s*[.!]?\s*$",
    re.I,
)
_JSON_OBJ = re.compile(r"\{[^{}]*\}", re.DOTALL)

# Free-text fallbacks. Every pattern matches whole tokens only, and a bare letter must be an upper-case
# A or B standing alone ("The winner is a close call" names no winner: "a" is an article). A reply
# that names both letters without one clear winner, or negates its verdict, is `invalid`, never a
# guess: a wrong verdict silently corrupts every metric, an invalid one is counted and reported.
_NAMED = (
    r"(?:(?i:response|output|answer|assistant|model|candidate)\s*\(?(?i:{x})\)?"  # Response A, Output (a)
    r"|\[\[\s*(?i:{x})\s*\]\]"  # [[A]]
    r"|(?-i:{X})(?![\w(]))"  # a bare upper-case letter standing alone
)
_VERBS = r"(?:pick|choose|select|prefer|go with|vote for|would pick|would choose)"


def _fallback(letter: str) -> re.Pattern[str]:
    named = _NAMED.format(x=letter.lower(), X=letter)
    return re.compile(
        r"\[\[\s*" + letter + r"\s*\]\]"
        r"|\bwinner\W{0,5}(?:is\s+)?(?:clearly\s+)?"
        + named
        + r"|\b(?:the\s+)?(?:better|best)\s+(?:one|response|output|answer)\s+is\s+"
        + named
        + r"|(?:\bI\s+)?\b"
        + _VERBS
        + r"\s+"
        + named
        + r"|(?<![\w)])"
        + named
        + r"\s+is\s+(?:clearly\s+|much\s+|slightly\s+)?(?:better|superior|the winner|the better one)\b"
        + r"|(?:胜者|获胜者|赢家|答案|结论)\s*[:：是为]?\s*(?:回答|输出)?\s*(?-i:"
        + letter
        + r")(?![A-Za-z])"
        + r"|(?:回答|输出)\s*(?-i:"
        + letter
        + r")\s*(?:更好|更优|胜出)",
        re.IGNORECASE,
    )


_FALLBACKS: list[tuple[Winner, re.Pattern[str]]] = [
    ("A", _fallback("A")),
    ("B", _fallback("B")),
    (
        "Tie",
        re.compile(
            r"\[\[\s*tie\s*\]\]|\bwinner\W{0,5}(?:is\s+)?(?:a\s+)?(?:tie|draw)\b"
            r"|\bit'?s a (?:tie|draw)\b|\bequally (?:good|well)\b|\bverdict\s*[:=]?\s*tie\b|平局|不分胜负",
            re.I,
        ),
    ),
]
# A negated or refused verdict ("there is no winner", "neither is better", "A is not better"):
# the reply is invalid whatever letter it also names.
_NEGATION = re.compile(
    r"\bno (?:clear )?winner\b|\bneither\b|\bnone of (?:them|the)\b|\bcannot (?:decide|choose|pick|judge)\b"
    r"|\bcan'?t (?:decide|choose|pick|judge)\b|\bnot (?:the )?(?:better|winner)\b|\bis not better\b"
    r"|\bI (?:won'?t|will not|refuse to) (?:choose|pick|judge)\b|无法判断|都不",
    re.I,
)


@dataclass(frozen=True)
class ParsedVerdict:
    winner: Winner
    parse_error: str | None = None
    confidence: float | None = None
    reason: str | None = None
    method: str = ""


def normalise_winner(value: object, *, allow_tie: bool = True) -> Winner | None:
    """'A' / 'Response A' / 'Output (a)' -> A; likewise B; tie/draw/equal -> Tie; else None."""
    if not isinstance(value, str | int):
        return None
    text = str(value).strip()
    if _A_WORDS.match(text):
        return "A"
    if _B_WORDS.match(text):
        return "B"
    if allow_tie and _TIE_WORDS.match(text):
        return "Tie"
    return None


def _json_candidates(text: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = re.sub(r"^```(?:json)?\s*|\s*```$", "", stripped)
    try:
        whole = json.loads(stripped)
        if isinstance(whole, dict):
            return [whole]
    except json.JSONDecodeError:
        pass
    for match in _JSON_OBJ.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def _confidence(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if math.isnan(number):
        return None
    if 1 < number <= 100:  # a percentage
        number /= 100
    return number if 0 <= number <= 1 else None


def parse_verdict(
    text: str | None, template: JudgeTemplate, answer_format: AnswerFormat | None = None
) -> ParsedVerdict:
    """Map a judge reply to A / B / Tie, or `invalid` with the reason."""
    fmt = answer_format or template.answer_format
    if text is None or not text.strip():
        return ParsedVerdict("invalid", "empty reply")
    if fmt == "patterns":
        return _parse_patterns(text, template)
    if fmt == "letter":
        first = text.strip().split()[0] if text.strip() else ""
        winner = normalise_winner(first.strip(".,:;\"'"), allow_tie=template.allow_tie)
        if winner is None and template.allow_tie and first.lower().startswith("tie"):
            winner = "Tie"
        if winner is not None:
            return ParsedVerdict(winner, method="letter")
        return ParsedVerdict("invalid", f"first word {first[:40]!r} is not A, B or Tie")
    # json, then fallbacks
    verdicts = [obj for obj in _json_candidates(text) if "winner" in obj]
    if verdicts:
        obj = verdicts[-1]
        winner = normalise_winner(obj["winner"], allow_tie=template.allow_tie)
        if winner is None:
            return ParsedVerdict(
                "invalid", f"JSON winner {obj['winner']!r} is not A, B or Tie", method="json"
            )
        # A reply that carries several JSON verdicts that disagree (e.g. the judge's own, then a
        # candidate's injected {"winner": ...} it quotes) has no readable verdict: never pick one.
        named = {w for o in verdicts if (w := normalise_winner(o["winner"], allow_tie=template.allow_tie))}
        if len(named) > 1:
            return ParsedVerdict(
                "invalid", f"ambiguous reply: JSON objects name {sorted(named)} as the winner", method="json"
            )
        reason = obj.get("reason")
        return ParsedVerdict(
            winner,
            confidence=_confidence(obj.get("confidence")),
            reason=str(reason) if reason is not None else None,
            method="json",
        )
    whole = normalise_winner(text, allow_tie=template.allow_tie)
    if whole is not None:
        return ParsedVerdict(whole, method="bare")
    return _parse_free_text(text, template)


def _parse_free_text(text: str, template: JudgeTemplate) -> ParsedVerdict:
    """The tolerant fallbacks: exactly one winner named by a whole-token phrase, and no negation."""
    hits = {w for w, pattern in _FALLBACKS if pattern.search(text) and (w != "Tie" or template.allow_tie)}
    if hits and (negated := _NEGATION.search(text)):
        return ParsedVerdict("invalid", f"the reply negates or refuses a verdict ({negated.group(0)!r})")
    if len(hits) == 1:
        return ParsedVerdict(hits.pop(), method="fallback")
    if len(hits) > 1:
        return ParsedVerdict("invalid", f"ambiguous reply mentions {sorted(hits)} as the winner")
    return ParsedVerdict("invalid", "no JSON winner and no recognisable verdict in the reply")


def _parse_patterns(text: str, template: JudgeTemplate) -> ParsedVerdict:
    found: dict[Winner, int] = {}
    choices: list[tuple[Winner, list[str]]] = [
        ("A", template.a_patterns),
        ("B", template.b_patterns),
        ("Tie", template.tie_patterns),
    ]
    for winner, patterns in choices:
        positions = [m.start() for p in patterns for m in re.finditer(p, text, re.IGNORECASE)]
        if positions:
            found[winner] = min(positions)
    if not found:
        return ParsedVerdict("invalid", "reply matches none of the template's answer patterns")
    if (negated := _NEGATION.search(text)) is not None:
        return ParsedVerdict("invalid", f"the reply negates or refuses a verdict ({negated.group(0)!r})")
    if len(found) == 1:
        return ParsedVerdict(next(iter(found)), method="patterns")
    # Both named: the reply's verdict is the one it leads with only when that leading mention stands
    # alone ("Output (a)" then an explanation). "Output (a) or Output (b)? I choose Output (b)." or
    # "Output (a) is worse; Output (b) is better." lead with a mention that is not a verdict: invalid.
    first = min(found, key=lambda w: found[w])
    if found[first] <= 2 and _standalone_lead(text, template, first):
        return ParsedVerdict(first, method="patterns-first")
    return ParsedVerdict("invalid", f"reply names several answers: {sorted(found)}")


def _standalone_lead(text: str, template: JudgeTemplate, winner: Winner) -> bool:
    """Does the reply open with the `winner` pattern as a verdict of its own (then a line break, or
    a full stop/colon and more text), not as part of a sentence that goes on to compare?"""
    patterns = {"A": template.a_patterns, "B": template.b_patterns, "Tie": template.tie_patterns}[winner]
    for pattern in patterns:
        match = re.match(r"\s*(?:" + pattern + r")", text, re.IGNORECASE)
        if match is not None:
            rest = text[match.end() :]
            return (
                re.match(
                    r"\s*(?:$|\n|[.!:;]\s*(?:\n|$)|[.!:]\s+(?:explanation|reason|because)\b)", rest, re.I
                )
                is not None
            )
    return False


_VERDICT_TOKENS: dict[str, tuple[str, ...]] = {
    "A": ("a",),
    "B": ("b",),
    "Tie": ("tie", "t", "ti"),
}


def verdict_probabilities(
    logprobs: list[TokenLogprob] | None, text: str
) -> tuple[float, float, float] | None:
    """P(A), P(B), P(Tie) at the token where the verdict is written, from the top alternatives.

    The verdict position is the first generated token that, stripped of spaces, quotes and
    brackets, is A, B or a prefix of Tie; for a JSON reply that is the value of `winner`.
    """
    if not logprobs:
        return None
    start = 0
    winner_at = text.find('"winner"')
    offset = 0
    for index, tok in enumerate(logprobs):
        if winner_at >= 0 and offset < winner_at + len('"winner"'):
            offset += len(tok.token)
            continue
        clean = tok.token.strip().strip("\"'([:").lower()
        if clean in {"a", "b"} or (clean and "tie".startswith(clean)):
            start = index
            break
        offset += len(tok.token)
    else:
        return None
    top = dict(logprobs[start].top) or {logprobs[start].token: logprobs[start].logprob}
    top.setdefault(logprobs[start].token, logprobs[start].logprob)
    probs = {"A": 0.0, "B": 0.0, "Tie": 0.0}
    for token, logprob in top.items():
        clean = token.strip().strip("\"'([:").lower()
        for winner, forms in _VERDICT_TOKENS.items():
            if clean in forms:
                probs[winner] += math.exp(logprob)
    if probs["A"] + probs["B"] + probs["Tie"] <= 0:
        return None
    return probs["A"], probs["B"], probs["Tie"]
