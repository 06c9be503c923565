"""The bbe plot: raw vs bias-bounded scores per unit, and system rankings before and after.

matplotlib (0.7 s to import) loads when the plot is drawn, not with the bbe package."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judgebench.bbe.scores import ScoreSet
from judgebench.palette import judge_colors, wrap_label
from judgebench.records.bbe_document import SystemRow


def _name(text: str, width: int) -> str:
    """A long system or judge name on several lines, broken after a colon, slash or space only."""
    return "\n".join(wrap_label(text, width))


def plot_bbe(
    path: Path,
    sets: list[tuple[ScoreSet, np.ndarray | None]],
    rows: list[SystemRow],
    *,
    title: str,
) -> Path:
    """Left: per-unit raw vs bias-bounded (normalised); right: ranks raw -> bias-bounded (slope chart).
    One colour per system in both panels (a Judge-LS run's systems are its judges)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_u, ax_r) = plt.subplots(1, 2, figsize=(11, 4.6))
    # one colour per system in both panels, the colour the report gives that judge elsewhere
    colour = judge_colors([r.system for r in rows] + [s for ss, _ in sets for s in ss.systems], mean=None)
    for ss, noisy in sets:
        if noisy is None:
            continue
        systems = np.asarray(ss.systems)
        for system in dict.fromkeys(ss.systems):
            mask = systems == system
            ax_u.scatter(
                ss.base[mask], noisy[mask], s=6, alpha=0.5, color=colour[system], label=_name(system, 40)
            )
    ax_u.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax_u.set_xlabel("raw score (normalised)")
    ax_u.set_ylabel("bias-bounded score")
    ax_u.set_title("per unit")
    drawn = any(noisy is not None for _, noisy in sets)
    if drawn and len(colour) <= 8:  # an infeasible calibration draws nothing: no empty-legend warning
        ax_u.legend(fontsize=7, loc="upper left")
    ranked = [row for row in rows if row.rank_bias_bounded is not None]
    if len(ranked) < 2:  # one system: a ranking of one is no comparison, not a lone dot
        ax_r.text(
            0.5,
            0.5,
            "one judge: nothing to rank\n(its raw and bias-bounded aggregates\nare in the table; "
            "judge with two\nor more --model for a ranking)"
            if ranked
            else "no bias-bounded ranking",
            ha="center",
            va="center",
            transform=ax_r.transAxes,
            fontsize=9,
            color="#555555",
        )
        ax_r.set_yticks([])  # no fractional ranks around nothing
        ranked = []
    for row in ranked:
        rank = row.rank_bias_bounded
        if rank is None:
            continue
        ax_r.plot([0, 1], [row.rank_raw, rank], marker="o", color=colour[row.system])
        ax_r.annotate(
            _name(row.system, 28),
            (0, row.rank_raw),
            xytext=(-6, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=7,
        )
        ax_r.annotate(
            f"{row.bias_bounded:.4g}" if row.bias_bounded is not None else "",
            (1, rank),
            xytext=(6, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=7,
        )
    ranks = [r.rank_raw for r in ranked] + [r.rank_bias_bounded for r in ranked if r.rank_bias_bounded]
    if ranks:
        ax_r.set_yticks(range(1, max(ranks) + 1))
    ax_r.set_xticks([0, 1], ["raw", "bias-bounded"])
    ax_r.set_xlim(-0.9, 1.5)
    ax_r.invert_yaxis()
    ax_r.set_ylabel("rank (1 = best)")
    ax_r.set_title("system ranking")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
