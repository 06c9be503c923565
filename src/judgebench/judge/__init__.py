"""The Judge-LS judging stage's parts: the call plan, judge templates, the requests built from them,
and verdict parsing into judgments. The calls themselves are made by `judgebench.execution`, the
stage is run by `judgebench.api.judge`."""
