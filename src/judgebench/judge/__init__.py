"""The Judge-LS judging stage: call plan, templates, verdict parsing, run."""
