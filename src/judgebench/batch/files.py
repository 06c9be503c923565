"""Batch files for running the calls elsewhere: the OpenAI Batch JSONL that `vllm run-batch` reads, and
importing its output (`judgebench judge --import-batch FILE`).

The `custom_id` of each line is the call's cache key (provider, model, base URL and every parameter),
so the output file imports back only for the same model spec and `--base-url` it was written with,
and an imported answer lands in the response store exactly where a live answer would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from judgebench.batch.openai_batch import openai_line, parse_output_line
from judgebench.errors import InputError, ProviderConfigError
from judgebench.models.base import ModelRequest, prompt_hash
from judgebench.models.client import ModelClient
from judgebench.models.openai import OpenAICompatibleProvider, OpenAIProvider
from judgebench.models.provider_registry import provider_class
from judgebench.models.results import CallResult, kept_answer
from judgebench.outside import loads
from judgebench.store.atomic_files import atomic_write_text

__all__ = ["import_batch_output", "write_batch_file"]


def _wire_provider(client: ModelClient) -> OpenAIProvider:
    """The adapter that builds and parses OpenAI-format bodies for `client`'s model.

    Specs whose adapter speaks the OpenAI format (an `OpenAIProvider`) use it, so the file holds
    what a live call sends; any other spec, or one whose adapter cannot be built here (no key, no
    URL), gets a generic OpenAI-compatible one, which is what vLLM speaks. It is never used to send
    anything."""
    if issubclass(provider_class(client.spec.provider), OpenAIProvider):
        try:
            provider = client.provider
        except ProviderConfigError:
            provider = None
        if isinstance(provider, OpenAIProvider):
            return provider
    settings = client.settings.model_copy(
        update={"base_url": client.settings.base_url or "http://127.0.0.1/v1"}
    )
    return OpenAICompatibleProvider(client.spec.model, settings)


def write_batch_file(client: ModelClient, requests: Sequence[ModelRequest], path: Path) -> int:
    """Write one OpenAI Batch JSONL line per distinct call (custom_id = cache key); returns how many.

    Run it with `vllm run-batch -i FILE -o OUT --model MODEL` (or upload it to the OpenAI Batch API)."""
    provider = _wire_provider(client)
    lines: list[str] = []
    seen: set[str] = set()
    for request in requests:
        key = client.key_for(request)
        if key in seen:
            continue
        seen.add(key)
        _, line = openai_line(provider, key, request)
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    atomic_write_text(Path(path), "".join(f"{line}\n" for line in lines))
    return len(lines)


def _read_output(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        raise InputError("batch output file not found", path=str(path))
    by_id: dict[str, dict[str, Any]] = {}
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = loads(raw.decode("utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise InputError(f"not a JSON line ({exc})", path=str(path), line=number) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
                raise InputError(
                    "not an OpenAI batch output line (needs custom_id and response or error)",
                    path=str(path),
                    line=number,
                )
            by_id[obj["custom_id"]] = obj  # a later line for the same call supersedes an earlier one
    return by_id


def import_batch_output(
    client: ModelClient,
    requests: Sequence[ModelRequest],
    output_file: Path,
    *,
    on_result: Callable[[int, CallResult], None] | None = None,
) -> list[CallResult]:
    """Turn an OpenAI/vLLM batch output file into one CallResult per request (in order).

    Answers are stored in the response store first; a call with no line in the file, or whose line is
    an error, becomes a failed CallResult (a later live or batch run retries it). Raises InputError
    when no line matches any request (the file was written for another model spec or base URL)."""
    output_file = Path(output_file)
    lines = _read_output(output_file)
    provider = _wire_provider(client)
    keys = [client.key_for(r) for r in requests]
    if lines and not set(lines).intersection(keys):
        raise InputError(
            f"none of its {len(lines)} lines matches a call of {client.spec.text}: custom_ids are "
            "cache keys of provider, model, base URL and parameters, so import with the same "
            "--model, --base-url and template the request file was written with",
            path=str(output_file),
        )
    results: list[CallResult] = []
    done: set[str] = set()
    for index, (key, request) in enumerate(zip(keys, requests, strict=True)):
        obj = lines.get(key)
        if obj is None:
            error = f"no line for this call in {output_file} (custom_id {key[:12]}...)"
            result = CallResult(cache_key=key, prompt_hash=prompt_hash(request), response=None, error=error)
        else:
            result = _imported(client, provider, request, key, obj, source=output_file, repeat=key in done)
            done.add(key)
        client.stats.record_calls()
        client.stats.record_result(result)
        results.append(result)
        if on_result is not None:
            on_result(index, result)
    return results


def _imported(
    client: ModelClient,
    provider: OpenAIProvider,
    request: ModelRequest,
    key: str,
    obj: dict[str, Any],
    *,
    source: Path,
    repeat: bool,
) -> CallResult:
    """One line of the output file `source` as a CallResult; a first answer is stored (before anyone
    sees it), a repeat of the same call is a store hit."""
    phash = prompt_hash(request)
    batch_id = f"file:{source.name}"
    outcome = parse_output_line(provider, obj, source.name)
    response = outcome.response
    if response is None:
        return CallResult(cache_key=key, prompt_hash=phash, response=None, error=outcome.error, custom_id=key)
    endpoint = "completions" if provider._use_completions(request) else "chat.completions"
    response = kept_answer(client.checked_usage(response, request), client.settings.max_answer_chars)
    response.params_sent = {
        **provider.build_params(request),
        "endpoint": endpoint,
        "batch_id": batch_id,
        "custom_id": key,
    }
    if not repeat:
        spec = client.spec
        client.cache.put(key, response, provider=spec.provider, model=spec.model, spec=spec.text)
    return CallResult(
        cache_key=key,
        prompt_hash=phash,
        response=response,
        from_cache=repeat,
        attempts=0 if repeat else 1,
        cost_usd=client.cost_of(response, batch=True),
        params_sent=response.params_sent,
        batch_id=batch_id,
        custom_id=key,
    )
