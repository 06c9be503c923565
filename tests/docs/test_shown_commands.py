"""Every `judgebench ...` command the README and the guides show, executed.

Each page's commands run in the order shown, in one temporary folder (the page's steps build on one
another: `run` then `compare`, `translate` then `judge` then `report`), through the Typer app. A
command runs as shown, or after one of the mechanical substitutions in SUBSTITUTIONS (a path the
reader has, a server the reader runs, a smaller size), with the files the reader brings written by
INPUTS and the environment in ENVIRONMENT: provider models reach the local wire-format servers of
tests/servers through their official SDKs, with a fake key. A command that cannot run offline is named
in NOT_RUN with the reason; a shown command that is neither runnable nor named there fails the test.
Each command must exit with 0 (or the code a `# exit N` comment beside it says) and keep the promise
PROMISES holds for it (a file it writes, a line it prints).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from judgebench.cli import app
from judgebench.selective import SimJudge
from tests.cli.test_newcomer import fake_llmbar
from tests.data.hub_server import HubServer
from tests.data.rewardbench_fixture import write_snapshot
from tests.data.test_hub_download import MRB, RB
from tests.e2e.helpers import verdict_text, write_items
from tests.importers.shapes import arena_hard_rows, write_jsonl
from tests.selective.planted import planted_run
from tests.servers.anthropic_server import AnthropicServer, message_body
from tests.servers.base import Reply, SeenRequest
from tests.servers.openai_server import OpenAIServer, chat_body
from tests.translate.test_translate_stage import ScriptedTranslator

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# the CLI reference is the help text itself (tests/docs/test_docs.py checks it is current)
PAGES = [ROOT / "README.md", *(p for p in sorted(DOCS.rglob("*.md")) if p.name != "cli.md")]


@dataclass(frozen=True)
class Shown:
    page: str
    line: int
    text: str  # as the page shows it
    exit_code: int  # 0, or what a `# exit N` comment beside it says
    inline: bool  # in a sentence, not a code block


def _fenced(path: Path) -> Iterator[Shown]:
    text = path.read_text(encoding="utf-8")
    page = str(path.relative_to(ROOT))
    for block in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):  # every block, so fences pair up
        if block.group(1) not in ("bash", "sh", "console", ""):
            continue
        start = text[: block.start()].count("\n") + 2
        joined = re.sub(r"\\\n\s*", " ", block.group(2))
        for offset, line in enumerate(joined.splitlines()):
            command, _, comment = line.partition(" # ")
            said = re.search(r"\bexit (\d+)", comment)
            for piece in re.split(r"&&|;|\|", command):
                piece = " ".join(piece.split())
                if piece.startswith("judgebench "):
                    yield Shown(page, start + offset, piece, int(said.group(1)) if said else 0, False)


def _inline(path: Path) -> Iterator[Shown]:
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), path.read_text("utf-8"), flags=re.S)
    page = str(path.relative_to(ROOT))
    for match in re.finditer(r"`(judgebench(?: [^`]*)?)`", text):
        yield Shown(page, text[: match.start()].count("\n") + 1, match.group(1).strip(), 0, True)


def shown_commands() -> dict[str, list[Shown]]:
    """Each page's shown commands in page order (a command shown twice on a page runs once)."""
    pages: dict[str, list[Shown]] = {}
    for path in PAGES:
        seen: set[str] = set()
        for shown in sorted([*_fenced(path), *_inline(path)], key=lambda s: s.line):
            if shown.text not in seen:
                seen.add(shown.text)
                pages.setdefault(shown.page, []).append(shown)
    return pages


SHOWN = shown_commands()

# --- what runs instead of what the page shows, and why ------------------------------------------------

# (pattern, replacement, why): applied in order to every shown command; {name} is a path or URL of the
# test's (see Context).
SUBSTITUTIONS: list[tuple[str, str, str]] = [
    (
        r"~/llmbar",
        "{llmbar}",
        "the reader's LLMBar copy: a toy copy in LLMBar's layout (two items per subset, published "
        "verdicts of GPT-4/Vanilla), so that each page's steps take seconds (the real benchmark's 419 "
        "items are the other tests')",
    ),
    (
        r"^(?!.*--data-dir)(judgebench (?:run|plan) .*--dataset llmbar\b.*)$",
        r"\1 --data-dir {llmbar}",
        "LLMBar's first-use download (checksummed against the pinned commit, which a toy copy cannot "
        "match) replaced by the same local copy",
    ),
    (
        r"--data-dir DIR",
        "--data-dir {hub}",
        "DIR: RewardBench and M-RewardBench snapshots in the hub's "
        "layout, written by tests/data/rewardbench_fixture",
    ),
    (r"http://gpu:8000/v1", "{openai}", "the reader's vLLM server: the local OpenAI wire-format server"),
    (
        r"(--model local --dataset sample) --limit 12\b",
        r"\1 --limit 2",
        "the probes guide's twelve items take minutes of the embedded model on CPU; 2 items judge every "
        "probe condition the same way",
    ),
    (
        r"^judgebench run$",
        "judgebench run --limit 3",
        "the quick start's 30 items take minutes of the "
        "embedded model on CPU; 3 items go through every stage",
    ),
    (
        r"import arena-hard (.*) PATH$",
        r"import arena-hard \1 arena-hard/model_judgment/gpt-4-1106-preview/llama-3-8b.jsonl",
        "placeholder: the reader's Arena-Hard judgments file (games with their prompts, "
        "tests/importers/shapes.arena_hard_rows)",
    ),
]

# the reader's environment: keys are fake and every provider host is a local server
ENVIRONMENT: dict[str, tuple[str, str]] = {
    "OPENAI_API_KEY": ("sk-test-not-a-key", "the key the guides export; fake, the server ignores it"),
    "ANTHROPIC_API_KEY": ("sk-ant-test-not-a-key", "likewise"),
    "OPENAI_BASE_URL": (
        "{openai}",
        "openai: judges and translators reach the local OpenAI wire-format "
        "server (a scripted translator and a judge whose verdict is read from the prompt)",
    ),
    "ANTHROPIC_BASE_URL": ("{anthropic}", "anthropic: judges reach the local Messages wire-format server"),
    "HF_ENDPOINT": ("{hf}", "the hub: a 127.0.0.1 server over the same snapshots, at the pinned commits"),
    "HF_HUB_DISABLE_TELEMETRY": ("1", "nothing leaves the machine"),
    "COLUMNS": ("200", "whole table rows in the captured output"),
}

# commands that cannot run offline, by their text as shown, with the reason
NOT_RUN: dict[str, str] = {
    "judgebench judge --run runs/llmbar --model openai-compatible:Qwen/Qwen3-8B --base-url "
    "http://gpu:8000/v1 --import-batch results.jsonl": "results.jsonl is written by `vllm run-batch` "
    "(a GPU server), the step between; tests/batch imports such files",
    "judgebench import my-log --run RUN FILE": "my-log is a format the reader registers from another "
    "package (an entry point); tests/importers/test_cli.py::test_a_plugin_format_imports imports one",
}

# A command name in a sentence, bare or with flags only (`judgebench compare`, `judgebench run
# --until-settled`), names the command or a flag of it, and a
# command in a sentence that keeps a placeholder after SUBSTITUTIONS (`judgebench report --run RUN`)
# shows its syntax: both run as `--help` of the command they name (test_docs.py checks their flags);
# their runnable forms are in the code blocks.
PLACEHOLDER = re.compile(r"(?<![\w/-])[A-Z][A-Z_]*(?![\w/-])|\[")

# Shown commands run before a page's own, where the page uses what another step builds: (text, why)
PREPARE: dict[str, list[tuple[str, str]]] = {
    "docs/guides/compare.md": [
        (
            f"judgebench run --run runs/{name} --model sim:{judge} --yes",
            "the page opens by comparing the runs its worked example builds at its end",
        )
        for name, judge in (
            ("day1", "drift-stable/1"),
            ("day2", "drift-stable/2"),
            ("upgrade", "drift-worse/2"),
        )
    ],
    **{
        page: [
            (
                "judgebench translate --run runs/llmbar --dataset llmbar --data-dir {llmbar} "
                "--translator openai:gpt-4.1-mini",
                "runs/llmbar is the LLMBar guide's run (its step 3) ...",
            ),
            (
                "judgebench judge --run runs/llmbar --model openai:gpt-4.1-mini --model "
                "anthropic:claude-haiku-4-5 --rpm 500",
                "... and its judges (its step 4)",
            ),
        ]
        for page in ("docs/guides/bbe.md", "docs/guides/planning.md")
    },
}


def _write_inputs(cwd: Path, ctx: dict[str, str]) -> None:
    """The files a reader brings, in the places the guides name them."""
    for name in ("data", "configs"):  # the guides run from a clone: data/sample_human.jsonl, configs/...
        (cwd / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / "data" / "bbe" / "scores_factors.csv", cwd / "scores.csv")
    shutil.copytree(ROOT / "data" / "bbe" / "arena-hard" / "model_judgment", cwd / "model_judgment")
    write_items(cwd / "items.jsonl", n=30)
    arena = cwd / "arena-hard" / "model_judgment" / "gpt-4-1106-preview" / "llama-3-8b.jsonl"
    write_jsonl(arena, arena_hard_rows())
    write_items(cwd / "my.jsonl", n=6)
    judges = {"local": (SimJudge(0.3), 0.0), "openai:gpt-4.1-mini": (SimJudge(0.2), 0.002)}
    for name, labels in (("study", "labels.csv"), ("pilot", "pilot.csv")):
        run, written = planted_run(cwd / "planted" / name, judges, items=400, labelled=200, seed=3)
        (cwd / "runs").mkdir(exist_ok=True)
        shutil.move(run, cwd / "runs" / name)
        shutil.move(written, cwd / labels)


# INPUTS names what _write_inputs writes, for the reader of this test
INPUTS: dict[str, str] = {
    "scores.csv": "a score table: data/bbe/scores_factors.csv (1-10 scale)",
    "model_judgment/gpt-4.1-mini": "Arena-Hard judgments: data/bbe/arena-hard's example",
    "arena-hard/model_judgment/...": "an Arena-Hard judgments file (tests/importers/shapes)",
    "items.jsonl, my.jsonl": "the reader's own pairwise items (tests/e2e/helpers.write_items)",
    "runs/study + labels.csv, runs/pilot + pilot.csv": "a run judged by `local` and openai:gpt-4.1-mini "
    "with verdict probabilities, and human labels on half its items (tests/selective/planted)",
}


# --- what each command promises ---------------------------------------------------------------------


def _flag(words: list[str], name: str) -> str | None:
    return words[words.index(name) + 1] if name in words else None


def _run_promise(words: list[str], out: str, cwd: Path) -> str | None:
    if "--dry-run" in words:
        return None if re.search(r"\bcalls?\b", out) else "a dry run prints the calls it would make"
    found = re.search(r"report: (\S+report\.html)", out)
    if not found or not (cwd / found.group(1)).is_file():
        return "`run` ends with `report: RUN/report.html`, and the file is there"
    if not re.search(r"^(PASS|FAIL|INCONCLUSIVE) \S+ on \S+ \(", out, re.M):
        return "`run` prints the readiness verdict per judge and language"
    return None


def _file_promise(subpath: str) -> Callable[[list[str], str, Path], str | None]:
    def check(words: list[str], out: str, cwd: Path) -> str | None:
        if "--dry-run" in words:
            return None if re.search(r"\bcalls?\b", out) else "a dry run prints the calls it would make"
        run = _flag(words, "--run")
        if run is None:
            return f"a --run folder holding {subpath}"
        return None if (cwd / run / subpath).is_file() else f"{run}/{subpath} is written"

    return check


def _judge_promise(words: list[str], out: str, cwd: Path) -> str | None:
    batch = _flag(words, "--write-batch")
    if batch is not None:
        return None if (cwd / batch).read_text().count("custom_id") > 0 else f"{batch} holds the requests"
    return _file_promise("judgments.jsonl")(words, out, cwd)


def _bbe_promise(words: list[str], out: str, cwd: Path) -> str | None:
    if (run := _flag(words, "--run")) is not None:
        where = cwd / run / "bbe.json"
    elif (folder := _flag(words, "--arena-hard")) is not None:
        where = cwd / folder / "bbe.json"
    else:  # beside the score table
        where = cwd / Path(_flag(words, "--scores") or "").parent / "bbe.json"
    return None if where.is_file() and "tau" in json.loads(where.read_text()) else f"{where.name} is written"


def _compare_promise(words: list[str], out: str, cwd: Path) -> str | None:
    a, b = [w for w in words[1:] if not w.startswith("-") and "/" in w][:2]
    where = cwd / b / f"compare-{Path(a).name}"
    return None if (where / "compare.json").is_file() else f"{where}/compare.json is written"


def _json_or_table(words: list[str], out: str, cwd: Path) -> str | None:
    if "--json" in words:
        # the output captured holds stderr too (a warning line about a modified copy comes first)
        body = "\n".join(re.split(r"^(?=[{\[])", out, maxsplit=1, flags=re.M)[1:])
        try:
            json.loads(body)
        except ValueError:
            return "--json prints JSON"
    return None if out.strip() else "it prints what it found"


def _plan_promise(words: list[str], out: str, cwd: Path) -> str | None:
    if "--human-labels" in words:
        return None if "human labels" in out else "a table of the human labels needed"
    return None if re.search(r"\bcalls\b", out) and "$" in out else "calls and cost"


def _report_promise(words: list[str], out: str, cwd: Path) -> str | None:
    missing = _file_promise("report.html")(words, out, cwd)
    if missing is None and "--human" in words and "Human labels: agreement with humans" not in out:
        return "the human-labels table (docs/guides/human-labels.md)"
    unstable = _flag(words, "--export-unstable")
    if missing is None and unstable is not None and not (cwd / unstable).is_file():
        return f"{unstable} is written"
    return missing


PROMISES: dict[str, Callable[[list[str], str, Path], str | None]] = {
    "run": _run_promise,
    "translate": _file_promise("variants.jsonl"),
    "judge": _judge_promise,
    "report": _report_promise,
    "bbe": _bbe_promise,
    "compare": _compare_promise,
    "import": _file_promise("judgments.jsonl"),
    "selective": _file_promise("selective.json"),
    "plan": _plan_promise,
    "data": _json_or_table,
    "cache": _json_or_table,
    "--help": lambda words, out, cwd: None if "Usage" in out else "the help",
}
# what a page promises beyond the command's own promise: (page, shown text) -> (file or regex, why)
PAGE_PROMISES: dict[tuple[str, str], str] = {
    (
        "docs/guides/compare.md",
        "judgebench compare runs/day1 runs/upgrade --gate 0.1 --gate-mcnemar 0.05",
    ): "runs/upgrade/compare-day1/compare_changed.jsonl",
}


# --- the test ------------------------------------------------------------------------------------------


def _answer(request: SeenRequest) -> Reply:
    """The OpenAI server: a translator for translation prompts, a judge reading the prompt otherwise."""
    messages = request.body.get("messages") if isinstance(request.body, dict) else None
    if messages and str(messages[0].get("content", "")).startswith("You translate"):
        reply: Reply = TRANSLATOR(request)
        return reply
    user = str(messages[-1]["content"]) if messages else ""
    model = str(request.body.get("model", "m")) if isinstance(request.body, dict) else "m"
    return Reply(body=chat_body(verdict_text(user), model=model, prompt_tokens=len(user) // 4))


TRANSLATOR = ScriptedTranslator()
TRANSLATOR.broken = False


def _claude(request: SeenRequest) -> Reply:
    body = request.body if isinstance(request.body, dict) else {}
    user = str(body.get("messages", [{}])[-1].get("content", ""))
    return Reply(body=message_body(verdict_text(user), model=str(body.get("model", "claude"))))


def _substitute(text: str, ctx: dict[str, str]) -> str:
    for pattern, replacement, _why in SUBSTITUTIONS:
        text = re.sub(pattern, replacement, text)
    return text.format(**ctx)


def _words(shown: Shown, ctx: dict[str, str]) -> list[str]:
    text = _substitute(" ".join(shown.text.split()), ctx)
    path = _command_path(shlex.split(text)[1:])
    flags_only = all(w.startswith("--") for w in shlex.split(text)[1 + len(path) :])
    if shown.inline and (flags_only or PLACEHOLDER.search(text)):
        named = [w for w in shlex.split(text)[1:] if re.fullmatch(r"[a-z][a-z-]*", w)]
        return [*_command_path(named), "--help"]
    return shlex.split(text)[1:]


def _command_path(words: list[str]) -> list[str]:
    command: Any = typer.main.get_command(app)
    path = []
    for word in words:
        if word not in getattr(command, "commands", {}):
            break
        command = command.commands[word]
        path.append(word)
    return path


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The local servers, and the hub snapshot they serve (read-only, shared by every page)."""
    hub = write_snapshot(tmp_path_factory.mktemp("hub"))
    openai = OpenAIServer(_answer).start()
    anthropic = AnthropicServer(_claude).start()
    hf = HubServer(
        repos={RB.repo: hub / RB.local_dir, MRB.repo: hub / MRB.local_dir},
        revisions={RB.repo: RB.revision, MRB.repo: MRB.revision},
    ).start()
    yield {"openai": openai.base_url, "anthropic": anthropic.url, "hf": hf.url, "hub": str(hub)}
    openai.stop()
    anthropic.stop()
    hf.stop()


@pytest.mark.slow  # 10 s to minutes a page (the quick start's embedded model, LLMBar's steps)
@pytest.mark.parametrize("page", list(SHOWN))
def test_every_command_a_page_shows_runs_and_keeps_its_promise(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: dict[str, str]
) -> None:
    llmbar = fake_llmbar(tmp_path / "llmbar", evaluators=("GPT-4/Vanilla",))
    ctx = {**servers, "llmbar": str(llmbar)}
    cwd = tmp_path / "reader"
    cwd.mkdir()
    _write_inputs(cwd, ctx)
    monkeypatch.chdir(cwd)
    env = {name: value.format(**ctx) for name, (value, _why) in ENVIRONMENT.items()}
    runner = CliRunner()
    for text, _why in PREPARE.get(page, []):
        done = runner.invoke(app, shlex.split(text.format(**ctx))[1:], env=env)
        assert done.exit_code == 0, f"{text}: {done.output[-2000:]}"
    problems = []
    for shown in SHOWN[page]:
        if shown.text in NOT_RUN:
            continue
        words = _words(shown, ctx)
        result = runner.invoke(app, words, env=env, input="y\n")
        where = f"{shown.page}:{shown.line}: `{shown.text}`"
        if result.exit_code != shown.exit_code:
            said = f"exited {result.exit_code}, not {shown.exit_code}"
            problems.append(f"{where} {said}:\n{result.output[-2000:]}")
            continue
        key = "--help" if words[-1] == "--help" else words[0]
        broken = PROMISES[key](words, result.output, cwd)
        extra = PAGE_PROMISES.get((shown.page, shown.text))
        if extra is not None and not (cwd / extra).exists():
            broken = f"{extra} is written"
        if broken:
            problems.append(f"{where}: promised {broken}:\n{result.output[-2000:]}")
    assert not problems, "\n\n".join(problems)


def test_every_shown_command_is_run_or_named_with_a_reason() -> None:
    every = [s for shown in SHOWN.values() for s in shown]
    assert len(every) >= 60
    texts = {s.text for s in every}
    assert set(NOT_RUN) <= texts, set(NOT_RUN) - texts  # a reason for a command no page shows is stale
    ctx = {k: "/x" for k in ("llmbar", "hub", "openai", "anthropic", "hf")}
    for shown in every:
        if shown.text in NOT_RUN:
            continue
        words = _words(shown, ctx)
        assert not [w for w in words if re.fullmatch(r"[A-Z_]+", w)], f"`{shown.text}` keeps a placeholder"
        key = "--help" if words[-1] == "--help" else words[0]
        assert key in PROMISES, f"`{shown.text}`: no promise is checked for `{key}`"
