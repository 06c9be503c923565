"""Average bias-bounded evaluation (A-BB, PROTOCOL §5): calibrated shrinkage and Gaussian noise so that a
stated kind of bias moves a judge's scores by more than tau with probability at most delta.

Entry points: `sources.bbe_from_run`, `bbe_from_table`, `bbe_from_arena_hard` and `bbe_from_bridge`
(each returns an `engine.BBERun`), then `outputs.write_outputs`; `api.bbe` wires them to a request.
The maths is pure given scores and neighbour changes: the formulas in `mechanism`, the sensitivity
estimate and its upper confidence bound in `sensitivity`, the certificates' arithmetic in
`certificates` and their kinds in `registry`, utility and verification. The edges do file I/O:
`scores` reads a run's judgments (through `judgment_table`), `tables` a scores table or an
arena-hard-auto folder, `outputs` and `plot` write bbe.json, the per-unit scores and the figure. No
model is called here: new neighbours are judged by `execution.rejudge`.
The package loads nothing itself: `bbe --help` reads the certificate registry without numpy.
"""
