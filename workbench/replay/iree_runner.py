"""Replay an IREE HAL capture with `iree-run-replay`, in the background, UI-free.

    run = start_replay(Path("jit_f.ireereplay"), ReplayOptions(device="local-sync"))
    for line in run.lines():      # from a Textual worker thread, or the CLI
        ...                       # run.cancel() from any other thread stops it
    result = run.wait()           # ToolResult: outcome, exit_code, message, duration_s

The tool fails loudly on anything it cannot reproduce (non-zero exit, an IREE status message
such as `DATA_LOSS; replay file length extends past file contents`); the result keeps that
message verbatim. One thing it does not check: a substitution for an executable id the
capture does not have is silently ignored, so `check_substitutions` refuses it beforehand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from workbench.external_tools import RUN_TOOL, ToolProcess, find_tool

DEFAULT_DEVICE = "local-sync"
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ReplayOptions:
    """What `iree-run-replay` is asked to do.

    `file_remaps` are (captured prefix, replay prefix) pairs for external files the capture
    references; `executable_substitutions` are (selector, path) pairs where the selector is an
    executable id (`4`), `4@FORMAT`, `all` or `all@FORMAT`, as `iree-run-replay` takes them.
    """

    device: str = DEFAULT_DEVICE
    file_remaps: tuple[tuple[str, str], ...] = ()
    executable_substitutions: tuple[tuple[str, str], ...] = ()
    timeout_s: float | None = DEFAULT_TIMEOUT_S


def split_assignment(text: str, flag: str, form: str) -> tuple[str, str]:
    """`FROM=TO` -> (FROM, TO), split at the first `=` as `iree-run-replay` does.

    Raises ValueError naming the flag and its `form` (`FROM=TO`) when the text has no `=` or
    nothing before it.
    """
    left, equals, right = text.partition("=")
    if not equals or not left:
        raise ValueError(f"{flag} takes {form}, got {text!r}")
    return left, right


def replay_command(replay_file: Path, options: ReplayOptions, tool: str = RUN_TOOL) -> list[str]:
    """The tool's arguments. Paths are absolute: IREE's flag parser takes no `--`, and a
    capture named `--flagfile=x.ireereplay` must stay a file, not become a flag."""
    command = [tool, f"--device={options.device}"]
    command += [f"--replay_file_remap={old}={new}" for old, new in options.file_remaps]
    command += [f"--replay_executable_substitution={selector}={Path(path).absolute()}"
                for selector, path in options.executable_substitutions]
    command.append(str(replay_file.absolute()))
    return command


def check_substitutions(substitutions: Iterable[tuple[str, str]],
                        executable_ids: Iterable[int]) -> list[str]:
    """Why each substitution would be ignored: its id names no executable of the capture.

    Selectors that are not plain ids (`all`, malformed ones) are left to the tool, which
    rejects malformed ones itself.
    """
    known = sorted(set(executable_ids))
    listed = ", ".join(str(i) for i in known) or "none"
    problems = []
    for selector, _path in substitutions:
        executable = selector.partition("@")[0]
        if executable.isdigit() and int(executable) not in known:
            problems.append(f"no executable {executable} in the capture "
                            f"(executables: {listed}); the replay would ignore {selector}")
    return problems


def start_replay(replay_file: Path, options: ReplayOptions) -> ToolProcess:
    """Start the replay in the background; raises `ToolMissing` when the tool is absent."""
    command = replay_command(replay_file, options, find_tool(RUN_TOOL))
    return ToolProcess(command, timeout_s=options.timeout_s)

