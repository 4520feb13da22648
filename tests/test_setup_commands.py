"""The README's set-up commands are the ones CI runs."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def setup_commands() -> list[str]:
    """The two commands of the README's first code block."""
    lines = (REPO / "README.md").read_text().splitlines()
    start = lines.index("```sh")
    end = lines.index("```", start + 1)
    return [line for line in lines[start + 1 : end] if line.strip()]


def test_readme_opens_with_two_setup_commands() -> None:
    install_and_run, install_and_test = setup_commands()
    assert install_and_run.startswith("pip install . && workbench ")
    assert "examples/" in install_and_run
    assert install_and_test.startswith("pip install '.[test") and "pytest" in install_and_test


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, install_and_test = setup_commands()
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert install_and_test in ci_lines
