"""Peer judge logs in: one module per format (JudgeBench outputs, Arena-Hard games, MT-Bench pairs,
AlpacaEval annotations, a generic file, LLMBar's published results), found through `registry`."""
