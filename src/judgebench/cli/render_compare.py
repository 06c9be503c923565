"""What `judgebench compare` prints: the drift tables (the library's sections), the gate's outcome
with its reasons, and where the files went."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from judgebench.cli.app import console
from judgebench.cli.render_report import inline_markup, print_sections

if TYPE_CHECKING:
    from judgebench.api import CompareResult


def comparison(result: CompareResult) -> None:
    print_sections(console, result.sections)  # the gate's section is the files': its lines follow
    doc = result.doc
    for section in result.sections:  # who met whom, what was not compared
        if section.terminal:
            for paragraph in section.paragraphs:
                console.print(inline_markup(paragraph), highlight=False)
    if doc.gate.flip_rate is not None or doc.gate.mcnemar_alpha is not None:
        if doc.gate_failed:
            blind = sum(": no evidence" in reason for reason in doc.gate_reasons)
            why = [] if blind == len(doc.gate_reasons) else ["the judge's verdicts changed beyond the limit"]
            why += ["some rows had nothing to compare (no evidence)"] if blind else []
            console.print(f"[bold red]GATE FAIL[/]: {'; '.join(why)}")
            for reason in doc.gate_reasons:
                console.print(f"  {escape(reason)}", highlight=False, soft_wrap=True)
        else:
            noisy = [r for r in doc.drift if "within noise" in (r.gate_flip, r.gate_mcnemar)]
            extra = f" ({len(noisy)} row(s) within noise of the limit)" if noisy else ""
            console.print(f"[bold green]GATE PASS[/]: no change beyond the limit with confidence{extra}")
    console.print(f"[bold]Wrote[/] {doc.changed:,} changed unit(s) and the comparison to:")
    for path in result.files:
        console.print(f"  {path}", highlight=False, soft_wrap=True, markup=False)
