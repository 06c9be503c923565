"""The documentation a user reads: the README stays short and inside the repository, the MkDocs site
builds strictly, the CLI reference is generated from the commands as they are, and every
`judgebench ...` command the README and the guides show names a real command with real flags."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from judgebench.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
USER_TEXTS = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
OUTSIDE = re.compile(r"\.\./shared|shared/docs|shared/llmbar|PROTOCOL\.md|INTERFACE\.md")


def test_readme_is_short_and_links_inside_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 10 * 1024, len(readme.encode("utf-8"))
    for target in re.findall(r"\]\(([^)#]+)", readme):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), f"README links to {target}, which is not in the repository"


@pytest.mark.parametrize("path", USER_TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_user_text_points_outside_the_repository(path: Path) -> None:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert not OUTSIDE.search(line), f"{path.relative_to(ROOT)}:{number}: {line.strip()}"


def _commands(root: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, root
    for name, sub in getattr(root, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_no_help_page_points_outside_the_repository() -> None:
    runner = CliRunner()
    root = typer.main.get_command(app)
    for path, _command in _commands(root):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert not OUTSIDE.search(result.output), (path, OUTSIDE.search(result.output))


def test_the_cli_reference_is_generated_from_the_commands_as_they_are() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr


def _shown_commands() -> Iterator[tuple[str, int, list[str]]]:
    """Every `judgebench ...` line in a fenced block of the README and the docs, with continuation
    lines joined and comments dropped."""
    for path in USER_TEXTS:
        text = path.read_text(encoding="utf-8")
        for block in re.finditer(r"```(?:bash|sh|console)?\n(.*?)```", text, re.S):
            start = text[: block.start()].count("\n") + 2
            joined = re.sub(r"\\\n\s*", " ", block.group(1))
            for offset, line in enumerate(joined.splitlines()):
                line = line.split(" # ")[0].strip()
                for piece in re.split(r"&&|;|\|", line):
                    piece = piece.strip()
                    if piece.startswith("judgebench "):
                        yield str(path.relative_to(ROOT)), start + offset, shlex.split(piece, comments=True)


SHOWN = list(_shown_commands())


def test_the_docs_show_commands() -> None:
    assert len(SHOWN) >= 30  # a guide without its commands would pass the check below vacuously


@pytest.mark.parametrize("where, line, words", SHOWN, ids=[f"{w}:{n}" for w, n, _ in SHOWN])
def test_every_shown_command_names_a_real_command_and_real_flags(
    where: str, line: int, words: list[str]
) -> None:
    command: Any = typer.main.get_command(app)
    rest = words[1:]
    while rest and hasattr(command, "commands") and rest[0] in command.commands:
        command = command.commands[rest.pop(0)]
    assert not hasattr(command, "commands"), f"{where}:{line}: `{' '.join(words)}` names no command"
    flags = {opt for p in command.params for opt in [*p.opts, *getattr(p, "secondary_opts", [])]}
    flags |= {"--help"}
    for word in rest:
        if word.startswith("--"):
            flag = word.split("=")[0]
            assert flag in flags, f"{where}:{line}: `{' '.join(words)}`: {flag} is not a flag of this command"


BESIDE = Path(sys.executable).parent / "mkdocs"
MKDOCS = str(BESIDE) if BESIDE.exists() else shutil.which("mkdocs")


@pytest.mark.skipif(MKDOCS is None, reason="mkdocs is not installed (pip install -e '.[dev]')")
def test_the_documentation_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = str(MKDOCS)
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
