"""What a calibration writes: bbe.json, the per-unit scores beside it, and its plot."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from judgebench.bbe.engine import BBERun
from judgebench.bbe.plot import plot_bbe
from judgebench.errors import ConfigError
from judgebench.records.sanitize import spreadsheet_cell
from judgebench.store.atomic_files import atomic_write_json, atomic_write_text
from judgebench.store.run_folder import BBE_JSON


def default_out(*, run: Path | None = None, scores: Path | None = None, arena: Path | None = None) -> Path:
    """INTERFACE: into the run folder, or beside the scores file (arena-hard: into its folder)."""
    if run is not None:
        return run / BBE_JSON
    if scores is not None:
        return scores.parent / BBE_JSON
    if arena is not None:
        return arena / BBE_JSON
    raise ConfigError("give --run DIR, --scores FILE --scale MIN MAX, or --arena-hard DIR")


def write_outputs(result: BBERun, out: Path, *, plot: bool = True) -> dict[str, str]:
    """bbe.json, `<stem>_scores.csv` (per unit raw and bias-bounded) and `<stem>.png` beside it."""

    out.parent.mkdir(parents=True, exist_ok=True)
    scores_path = out.with_name(out.stem + "_scores.csv")
    outputs = {"bbe_json": str(out), "scores_csv": str(scores_path)}
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(
        ["calibration", "system", "unit", "raw", "raw_normalised", "bias_bounded_normalised", "bias_bounded"]
    )
    for o in result.outputs + result.factor_outputs:
        ss = o.scores
        raw = ss.denormalise(ss.base)
        bb = ss.denormalise(o.bias_bounded) if o.bias_bounded is not None else None
        for i in range(len(ss)):
            writer.writerow(
                [
                    spreadsheet_cell(ss.name),  # names from the user's table: never a formula
                    spreadsheet_cell(ss.systems[i]),
                    spreadsheet_cell(ss.units[i]),
                    f"{raw[i]:.6g}",
                    f"{ss.base[i]:.6g}",
                    "" if o.bias_bounded is None else f"{o.bias_bounded[i]:.6g}",
                    "" if bb is None else f"{bb[i]:.6g}",
                ]
            )
    atomic_write_text(scores_path, buf.getvalue())
    if plot:
        png = out.with_suffix(".png")
        rows = result.result.systems
        plot_bbe(
            png,
            [(o.scores, o.bias_bounded) for o in result.outputs],
            rows,
            title=f"A-BB (tau={result.result.tau}, delta={result.result.delta}; certificate "
            f"{', '.join(sorted({c.certificate or '-' for c in result.result.calibrations}))})",
        )
        outputs["plot"] = str(png)
    result.result.outputs = outputs
    atomic_write_json(out, result.result.to_json_dict())
    return outputs
