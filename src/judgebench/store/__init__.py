"""The run folder: its manifest, the append-only JSONL logs (torn-line repair), the per-file indexes
kept in step with appends, judgments.jsonl as light answers and as columns (with its fingerprinted
cache), atomic whole-file writes and the folder lock; the judgment schema the fast readers use,
derived once from the records.

Nothing is imported here: a caller names the module it needs (the columnar table loads pyarrow)."""
