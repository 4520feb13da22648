"""What a reduction wrote and what its checks found, for either reducer (`hlo.py`, `mlir.py`):
the folder is bisected as `workbench bisect` would, and says in its README how to run it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.replay.judge.compare import Comparison


@dataclass
class Reduction:
    """What `reduce_to_folder` wrote and what its checks found."""

    out: Path
    files: list[str]
    instructions: tuple[int, int]  # instructions (MLIR: ops) in the reduced before and after
    reference_check: Comparison  # the reduced before's value against the original reference
    verdict_status: str  # the bisection of the folder: mismatch when the departure shows
    culprit_pass: str  # the pass that bisection names
    detail: str
    ir: str = "hlo"  # what the reduced modules are: HLO text, or MLIR in a trace

    @property
    def unit(self) -> str:
        """What the instruction counts count, in the reduced modules' own words."""
        return "ops" if self.ir == "mlir" else "instructions"

    @property
    def reproduces(self) -> bool:
        return self.reference_check.ok and self.verdict_status == "mismatch"


README = "README.txt"  # what a reproducer folder is and how to run it, beside its dump files


def readme_text(source: Path, out: Path, module: str, files: list[str], what: str,
                pass_name: str) -> str:
    """The README of reproducer folder `out`: what it holds and the commands that check it."""
    listed = "\n".join(f"  {name}" for name in files)
    return (f"Reproducer of a miscompile found by workbench in {source}, module {module}:\n"
            f"the culprit {what} alone, before and after pass {pass_name}, and a snapshot of\n"
            f"its inputs.\n\n"
            f"Files:\n{listed}\n\n"
            f"Check that it still fails (names the pass):\n"
            f"  workbench bisect {out} {module}\n"
            f"Compare the two versions (exit status 1: they differ):\n"
            f"  workbench diff {out} {module} 0 1\n"
            f"Open it in the terminal app:\n"
            f"  workbench {out}\n")


def bisect_folder(out: Path) -> tuple[str, str, str]:
    """Bisect the written folder as `workbench bisect` would: (status, culprit pass, detail)."""
    from workbench.index import scan
    from workbench.replay.bisect import bisect_replay
    from workbench.replay.steps import open_replay

    dump = scan(out)
    if len(dump.modules) != 1 or not dump.modules[0].executions:
        return "error", "", f"the folder does not read back as one module with a snapshot: " \
            f"{[p.reason for p in dump.problems]}"
    module = dump.modules[0]
    with open_replay(dump.root, module, module.executions[0]) as replay:
        verdict = bisect_replay(replay)
    culprit = verdict.culprit.step.pass_name if verdict.culprit is not None else ""
    return str(verdict.status), culprit, verdict.detail
