"""Translation audit (PROTOCOL §2): flags variants whose label may not have survived translation.

The reference rules (empty field, numbers, length ratio) are kept exactly; the additions (script share,
identical copy, lost code block) catch what a translator most often does wrong: answer in the source
language, echo the source, or drop or rewrite code. Flagged items are excluded from the report's
"filtered" tables, so a rule that fires on a correct variant costs data: each rule skips the cases where
its finding would not mean anything (a field that is only a number or only code, for instance).

Script checks ignore fenced and inline code, since PROTOCOL §2 keeps code verbatim. Supported scripts:
Han, Hiragana, Katakana, Japanese (= Hiragana + Katakana + Han), Hangul, Cyrillic, Latin, Greek, Arabic,
Hebrew, Thai, Devanagari, Bengali, Tamil, Georgian, Armenian, or several joined by "+". For a Latin
target (de, fr, ...) a translation's script check cannot tell German from English: such variants are
checked by `identical`, numbers, length and code only.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from judgebench.errors import ConfigError, InputError
from judgebench.records import AuditFlag, Item, Variant

FieldName = Literal["instruction", "output_1", "output_2"]
FIELDS: tuple[FieldName, ...] = ("instruction", "output_1", "output_2")

__all__ = [
    "DEFAULT_RULES",
    "RULES",
    "AuditRules",
    "audit_all",
    "audit_variant",
    "code_blocks",
    "flagged_item_ids",
    "prose",
    "script_letter_counts",
    "summarize",
]

RULES: tuple[str, ...] = (
    "empty",
    "numbers_missing",
    "numbers_count",
    "length_ratio",
    "script",
    "identical",
    "code_block",
)

NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE_RE = re.compile(r"`[^`\n]+`")

# Unicode character-name prefixes per script; Han ideographs are named "CJK ... IDEOGRAPH".
_SCRIPT_PREFIXES: dict[str, tuple[str, ...]] = {
    "Han": ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"),
    "Hiragana": ("HIRAGANA",),
    "Katakana": ("KATAKANA", "HALFWIDTH KATAKANA"),
    "Hangul": ("HANGUL",),
    "Cyrillic": ("CYRILLIC",),
    "Latin": ("LATIN",),
    "Greek": ("GREEK",),
    "Arabic": ("ARABIC",),
    "Hebrew": ("HEBREW",),
    "Thai": ("THAI",),
    "Devanagari": ("DEVANAGARI",),
    "Bengali": ("BENGALI",),
    "Tamil": ("TAMIL",),
    "Georgian": ("GEORGIAN",),
    "Armenian": ("ARMENIAN",),
}
_SCRIPT_ALIASES: dict[str, tuple[str, ...]] = {
    "Japanese": ("Hiragana", "Katakana", "Han"),
    "Korean": ("Hangul", "Han"),
    "Chinese": ("Han",),
}


def _resolve_script(script: str) -> tuple[str, ...]:
    """Expands `Japanese` or `Hiragana+Katakana+Han` into base script names; unknown names are errors."""
    names: list[str] = []
    for part in script.split("+"):
        name = part.strip()
        if name in _SCRIPT_ALIASES:
            names.extend(_SCRIPT_ALIASES[name])
        elif name in _SCRIPT_PREFIXES:
            names.append(name)
        else:
            known = ", ".join(sorted([*_SCRIPT_PREFIXES, *_SCRIPT_ALIASES]))
            raise ConfigError(f"unknown script '{name}' in audit rules (known: {known})")
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class AuditRules:
    """Thresholds for one condition (from configs/conditions.toml); defaults are the zh reference values."""

    kind: Literal["translation", "language_switch"] = "translation"
    script: str = "Han"
    min_length_ratio: float = 0.10
    min_target_script_share: float = 0.5
    numbers_missing_min_source: int = 2
    numbers_count_max_diff: int = 3
    # script checks are skipped on variant prose with fewer letters than this (too short to judge)
    min_script_letters: int = 2
    # a fenced code block whose text keeps less than this similarity to the source block is "lost"
    code_min_similarity: float = 0.6

    def __post_init__(self) -> None:
        if self.kind not in ("translation", "language_switch"):
            raise ConfigError(f"audit kind must be 'translation' or 'language_switch', not '{self.kind}'")
        _resolve_script(self.script)
        for name in ("min_length_ratio", "min_target_script_share", "code_min_similarity"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"audit setting {name} must be between 0 and 1, got {value}")
        for name in ("numbers_missing_min_source", "numbers_count_max_diff", "min_script_letters"):
            if getattr(self, name) < 0:
                raise ConfigError(f"audit setting {name} must be >= 0, got {getattr(self, name)}")

    @property
    def scripts(self) -> tuple[str, ...]:
        """The base scripts that count as the target script."""
        return _resolve_script(self.script)


DEFAULT_RULES: dict[str, AuditRules] = {
    "zh": AuditRules(),
    "ls": AuditRules(kind="language_switch", min_length_ratio=0.35),
}


def _closes(line: str, fence: str) -> bool:
    """A closing fence: the opening fence's character, at least as many, and nothing else (CommonMark)."""
    bare = line.strip()
    return len(line) - len(line.lstrip(" ")) <= 3 and len(bare) >= len(fence) and set(bare) == {fence[0]}


def code_blocks(text: str) -> list[str]:
    """The contents of fenced code blocks (``` or ~~~), in order; an unclosed fence runs to the end."""
    blocks: list[str] = []
    current: list[str] | None = None
    fence = ""
    for line in text.splitlines():
        match = FENCE_RE.match(line)
        if current is None:
            if match:
                current, fence = [], match.group(1)
        elif _closes(line, fence):
            blocks.append("\n".join(current))
            current = None
        else:
            current.append(line)
    if current is not None:
        blocks.append("\n".join(current))
    return blocks


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans: what a translator should translate."""
    kept: list[str] = []
    fence = ""
    inside = False
    for line in text.splitlines():
        match = FENCE_RE.match(line)
        if not inside:
            if match:
                inside, fence = True, match.group(1)
            else:
                kept.append(line)
        elif _closes(line, fence):
            inside = False
    return INLINE_CODE_RE.sub(" ", "\n".join(kept))


@lru_cache(maxsize=8192)
def _char_scripts(char: str) -> frozenset[str]:
    name = unicodedata.name(char, "")
    return frozenset(s for s, prefixes in _SCRIPT_PREFIXES.items() if name.startswith(prefixes))


def script_letter_counts(text: str) -> tuple[int, Counter[str]]:
    """(number of letters, letters per base script) in `text`; CJK ideographs count as letters."""
    total = 0
    counts: Counter[str] = Counter()
    for char in text:
        if char.isalpha():
            total += 1
            for script in _char_scripts(char):
                counts[script] += 1
    return total, counts


def _numbers(text: str) -> list[str]:
    return NUMBER_RE.findall(text)


def _has_letters(text: str) -> bool:
    return any(c.isalpha() for c in text)


def _squash(code: str) -> str:
    return " ".join(code.split())


def _field_flags(source: str, variant: str, rules: AuditRules) -> list[tuple[str, str]]:
    """(rule, detail) findings for one field; the checks are independent except `empty`."""
    found: list[tuple[str, str]] = []
    src, var = source.strip(), variant.strip()
    if not var:
        if src:
            found.append(("empty", "variant field is empty"))
        return found

    src_nums, var_nums = _numbers(src), _numbers(var)
    if len(src_nums) >= rules.numbers_missing_min_source and not var_nums:
        found.append(("numbers_missing", f"source has {len(src_nums)} numbers, variant 0"))
    elif abs(len(src_nums) - len(var_nums)) >= rules.numbers_count_max_diff:
        found.append(
            (
                "numbers_count",
                f"source has {len(src_nums)} numbers, variant {len(var_nums)} "
                f"(difference {abs(len(src_nums) - len(var_nums))} >= {rules.numbers_count_max_diff})",
            )
        )

    if src:
        ratio = len(var) / len(src)
        if ratio < rules.min_length_ratio:
            found.append(
                (
                    "length_ratio",
                    f"variant has {len(var)} characters, source {len(src)}: ratio {ratio:.2f} "
                    f"below {rules.min_length_ratio:.2f}",
                )
            )

    src_prose, var_prose = prose(src), prose(var)
    source_has_letters = _has_letters(src_prose)
    if source_has_letters:
        script_finding = _script_finding(var_prose, rules)
        if script_finding:
            found.append(("script", script_finding))
        if var == src:
            found.append(("identical", "variant is identical to the source"))

    found.extend(("code_block", d) for d in _code_findings(src, var, rules))
    return found


def _script_finding(var_prose: str, rules: AuditRules) -> str | None:
    letters, counts = script_letter_counts(var_prose)
    if letters < max(rules.min_script_letters, 1):
        return None
    scripts = rules.scripts
    target = sum(counts[s] for s in scripts)
    if rules.kind == "translation":
        share = target / letters
        if share < rules.min_target_script_share:
            return (
                f"{rules.script} letters are {share:.0%} of letters ({target} of {letters}), "
                f"below {rules.min_target_script_share:.0%}"
            )
        return None
    missing = []
    if target == 0:
        missing.append(rules.script)
    if counts["Latin"] == 0:
        missing.append("Latin")
    if missing:
        return f"language-switched text has no {' and no '.join(dict.fromkeys(missing))} letters"
    return None


def _code_findings(source: str, variant: str, rules: AuditRules) -> list[str]:
    src_blocks, var_blocks = code_blocks(source), code_blocks(variant)
    if len(src_blocks) != len(var_blocks):
        return [f"source has {len(src_blocks)} fenced code blocks, variant {len(var_blocks)}"]
    findings = []
    for index, (src_code, var_code) in enumerate(zip(src_blocks, var_blocks, strict=True), start=1):
        a, b = _squash(src_code), _squash(var_code)
        if a == b or not a:
            continue
        similarity = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
        if similarity < rules.code_min_similarity:
            findings.append(
                f"code block {index} changed: similarity {similarity:.2f} to the source block "
                f"(below {rules.code_min_similarity:.2f})"
            )
    return findings


def audit_variant(item: Item, variant: Variant, rules: AuditRules) -> list[AuditFlag]:
    """All flags for one variant of one item, field by field, in INTERFACE order."""
    if variant.item_id != item.id:
        raise InputError(f"variant belongs to item {variant.item_id!r}, audited against {item.id!r}")
    flags: list[AuditFlag] = []
    for name in FIELDS:
        for rule, detail in _field_flags(getattr(item, name), getattr(variant, name), rules):
            flags.append(
                AuditFlag(item_id=item.id, condition=variant.condition, field=name, rule=rule, detail=detail)
            )
    return flags


def audit_all(
    items: Mapping[str, Item],
    variants: Iterable[Variant],
    rules_by_condition: Mapping[str, AuditRules],
) -> list[AuditFlag]:
    """Audits every variant; a variant of an unknown item or a condition without rules is an error."""
    flags: list[AuditFlag] = []
    for variant in variants:
        item = items.get(variant.item_id)
        if item is None:
            raise InputError("variant for an item that is not in the dataset", item=variant.item_id)
        rules = rules_by_condition.get(variant.condition)
        if rules is None:
            known = ", ".join(sorted(rules_by_condition)) or "none"
            raise ConfigError(f"no audit rules for condition '{variant.condition}' (configured: {known})")
        flags.extend(audit_variant(item, variant, rules))
    return flags


def flagged_item_ids(flags: Iterable[AuditFlag]) -> set[str]:
    """Items with at least one flag: the ones the filtered (sensitivity) tables leave out."""
    return {flag.item_id for flag in flags}


def summarize(flags: Iterable[AuditFlag], n_items: int | None = None) -> dict[str, Any]:
    """Counts per rule and per condition, and how many items (and what share of `n_items`) are flagged."""
    flag_list = list(flags)
    by_rule = Counter(f.rule for f in flag_list)
    by_condition = Counter(f.condition for f in flag_list)
    by_condition_rule: dict[str, dict[str, int]] = {}
    for flag in flag_list:
        per = by_condition_rule.setdefault(flag.condition, {})
        per[flag.rule] = per.get(flag.rule, 0) + 1
    items_by_condition = {
        cond: len({f.item_id for f in flag_list if f.condition == cond}) for cond in sorted(by_condition)
    }
    flagged = flagged_item_ids(flag_list)
    return {
        "flags": len(flag_list),
        "by_rule": dict(sorted(by_rule.items())),
        "by_condition": dict(sorted(by_condition.items())),
        "by_condition_rule": {c: dict(sorted(r.items())) for c, r in sorted(by_condition_rule.items())},
        "flagged_items_by_condition": items_by_condition,
        "flagged_items": len(flagged),
        "items": n_items,
        "flagged_share": (len(flagged) / n_items) if n_items else None,
    }
