"""One colour per judge (or system) across every figure of a report, the A-BB figure included.

Colours go by the sorted names, so any figure drawn from the same names (the report's plots, `bbe`'s
figure) gives a judge the same colour whatever order it draws them in. The mean over judges is not a
judge: it is drawn in black, as a marker, never as one more coloured bar.
"""

from __future__ import annotations

from collections.abc import Iterable

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
MEAN_COLOUR = "#111111"
EXTRA = "#7F7F7F"  # beyond the palette's length (more than 7 judges): grey, still distinct from none


def judge_colors(names: Iterable[str], mean: str | None = "mean") -> dict[str, str]:
    """name -> colour: the sorted names take the palette in turn; `mean` (the mean-of-judges row) is
    black. More names than colours repeat the palette: a legend then tells them apart."""
    unique = sorted(set(names) - ({mean} if mean else set()))
    out = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(unique)}
    if mean is not None:
        out[mean] = MEAN_COLOUR
    return out


def wrap_label(text: str, width: int = 18) -> list[str]:
    """Lines of at most `width` characters, broken only after a space, a colon or a slash, never
    inside a word: a word longer than the width stays whole on its line."""
    tokens: list[str] = []
    current = ""
    for char in text:
        current += char
        if char in " :/":
            tokens.append(current)
            current = ""
    if current:
        tokens.append(current)
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len((line + token).rstrip()) > width:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines or [text]
