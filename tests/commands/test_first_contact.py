"""The command line as people expect it: `--version`, examples in every `--help`, and shell
completion generated from the parsers."""

from __future__ import annotations

import argparse
import importlib.metadata
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from workbench.cli import COMMAND_MODULES, build_parser
from workbench.commands.help_examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        run_cli(capsys, "--version")
    assert stop.value.code == 0
    printed = capsys.readouterr().out.strip()
    assert printed == f"workbench {importlib.metadata.version('dump-triage-workbench')}"


def test_the_installed_script_prints_its_version() -> None:
    done = subprocess.run([sys.executable, "-m", "workbench", "--version"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("workbench "), done.stderr


def test_every_command_has_examples() -> None:
    assert sorted(EXAMPLES) == sorted(["", *COMMAND_MODULES])
    assert all(1 <= len(examples) <= 2 for examples in EXAMPLES.values())


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_the_examples_parse(command: str) -> None:
    """Each example is a valid command line for today's parser (a renamed flag fails here)."""
    parser = build_parser()
    for line, _ in EXAMPLES[command]:
        words = shlex.split(line.split(">")[0].removeprefix('eval "$(').removesuffix(')"'))
        assert words[0] == "workbench"
        if command == "":  # `workbench DIR` opens the app; its parser is its own
            assert words[1] in COMMAND_MODULES or not words[1].startswith("-")
            continue
        assert words[1] == command
        parser.parse_args(words[1:])


@pytest.mark.parametrize("command", ["ls", "diff", "triage", "completion"])
def test_help_shows_the_examples(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run_cli(capsys, command, "--help")
    shown = capsys.readouterr().out
    assert "examples:" in shown
    assert all(line in shown for line, _ in EXAMPLES[command])


def subcommands(parser: argparse.ArgumentParser) -> list[str]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(action.choices)


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_names_every_command_and_flag(
        shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, script, _ = run_cli(capsys, "completion", shell)
    assert status == 0
    parser = build_parser()
    assert sorted(subcommands(parser)) == sorted(COMMAND_MODULES)
    for name in subcommands(parser):
        assert name in script
    assert "--localize" in script and "--keep-metadata" in script and "--dask-workers" in script


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_sources_the_script_and_completes(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, script, _ = run_cli(capsys, "completion", "bash")
    (tmp_path / "workbench.bash").write_text(script)
    # Complete `workbench tri` and `workbench triage --lo` as bash would on Tab.
    probe = f"""
source {tmp_path / 'workbench.bash'}
spec=$(complete -p workbench)
fn=$(echo "$spec" | sed -E 's/.* -F ([^ ]+) .*/\\1/')
for line in "workbench tri" "workbench triage --lo"; do
  COMP_LINE="$line"; COMP_WORDS=($line); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
  COMP_POINT=${{#line}}; COMPREPLY=()
  $fn workbench "${{COMP_WORDS[-1]}}" "${{COMP_WORDS[-2]}}"
  echo "${{COMPREPLY[@]}}"
done
"""
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.split() == ["triage"]
    assert "--localize" in second.split()


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_reads_the_script(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, script, _ = run_cli(capsys, "completion", "zsh")
    (tmp_path / "_workbench").write_text(script)
    done = subprocess.run(["zsh", "-n", str(tmp_path / "_workbench")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
