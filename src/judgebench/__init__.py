"""judgebench: meta-evaluation of LLM-as-a-judge (Judge-LS invariance and A-BB bias bounds)."""

__version__ = "0.1.0"
