"""The defaults a user can change with a flag, each stated once.

The request models (`JudgeRequest`, `PipelineRequest`, `PlanRequest`, ...) and `ProviderSettings`
take their field defaults from here, and the CLI declares its flags' defaults (and the `[default: N]`
of a flag whose unset value defers to configs/judges.toml) from the same names. A plain module with
no imports: the CLI reads it at start-up without loading the library.
"""

from __future__ import annotations

# what a study runs on when nothing is named: the bundled sample, the embedded offline model
DATASET = "sample"
MODEL = "local"
CONDITION_NAMES = ("zh", "ls")  # the default targets, in the order pairs are read
CONDITIONS = ",".join(CONDITION_NAMES)  # the same as the `--conditions` value

# judge --until-settled (and run, plan): items per seeded round
ROUND_ITEMS = 20

# `judgebench run`'s A-BB release (PROTOCOL §5): tolerance and failure probability
TAU = 0.5
DELTA = 0.01

# bbe --perturb / --verify-kind fresh: en units sampled for re-judging
PERTURB_UNITS = 200

# provider settings (ProviderSettings; configs/judges.toml may set others per judge)
TIMEOUT_S = 120.0
MAX_RETRIES = 8
CONCURRENCY = 8
MAX_ANSWER_CHARS = 65536

# --batch: seconds between polls of a submitted batch
POLL_INTERVAL_S = 30.0

# `judgebench plan`: the assumptions its MDEs, wall time and --until-settled figures rest on
PLAN_POWER = 0.8
PLAN_ALPHA = 0.05
PLAN_DISCORDANT = 0.2
PLAN_LATENCY_S = 2.0
PLAN_SIM_SEEDS = 5

# `judgebench compare`: the flip-rate limit of a bare `--gate`, and the level of its intervals
COMPARE_GATE_FLIP_RATE = 0.10
COMPARE_CONFIDENCE = 0.95
