"""Costing: what a stage's calls will cost before they are made, and the checks before paying.

`estimate` (a dry run's calls, tokens and live/batch cost per judge, from the resolved judges'
prices), `output_tokens` (the reply's tokens per judge and template: a run's own, measured,
assumed), `templates` (the same calls costed with each bundled template, for `plan`), `spending`
(Batch API support and the shared --max-cost budget, checked before anything is sent),
`durations` (seconds per call and a stage's expected time, configs/call_seconds.toml). A run's own
reply tokens come from the lines its `RunDir` already read (`output_tokens.run_figures`). The api
stages call these; nothing here calls a model.
"""
