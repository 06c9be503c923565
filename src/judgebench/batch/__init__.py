"""Full-scale runs through provider Batch APIs (OpenAI Batch, Anthropic Message Batches, Gemini batch
mode) and batch files.

`run_batch` answers a list of requests like `ModelClient.map`, through the provider's Batch API, at
batch prices, resumable from `run_dir/batches.json` (`execute_batch`: the same, its knobs as one
`BatchOptions`); which backend a spec uses, or why it has none (`refusal`), is a trait the provider
declares. `batch_rounds` runs a stage whose calls depend on earlier answers (translation) as a few
such batches; `write_batch_file` / `import_batch_output` move the same calls through
`vllm run-batch` (or any OpenAI-batch-format runner) and back.
"""

from judgebench.batch.backend import VLLM_HINT, BatchError, refusal
from judgebench.batch.files import import_batch_output, write_batch_file
from judgebench.batch.rounds import DEFERRED, DeferringClient, batch_rounds
from judgebench.batch.runner import BatchOptions, batch_estimate, execute_batch, resume_hint, run_batch
from judgebench.batch.state import BATCHES_JSON, BatchStore, Submission

__all__ = [
    "BATCHES_JSON",
    "DEFERRED",
    "VLLM_HINT",
    "BatchError",
    "BatchOptions",
    "BatchStore",
    "DeferringClient",
    "Submission",
    "batch_estimate",
    "batch_rounds",
    "execute_batch",
    "import_batch_output",
    "refusal",
    "resume_hint",
    "run_batch",
    "write_batch_file",
]
