"""What a verdict names: the culprit step and, when localized, the culprit instruction.

Results carry these to every reader (the commands' text and JSON, the app, the results
cache); `output/json_shapes.py` writes their JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.model import Step


@dataclass(frozen=True)
class CulpritInstruction:
    """The instruction that departs first, in the user's words, and by how much."""

    name: str
    computation: str
    opcode: str
    op_name: str
    source: str  # "file:line", or "" when its metadata does not say
    max_abs_error: float | None = None
    bound: float | None = None  # the rounding error bound it went beyond
    partitions: tuple[int, ...] = ()  # the devices it departs on (per-device SPMD steps)
    inside: str = ""  # where inside its reducer, body, comparator... it changed
    metadata_from: str = ""  # whose op_name and source these are, when not its own


@dataclass(frozen=True)
class Culprit:
    """The step whose pass broke the result (its position in the module's timeline) and,
    once localization was asked for (`localized`), its instruction or why there is none."""

    index: int
    pass_name: str
    xla_step: int | None
    file: str | None
    localized: bool = False
    instruction: CulpritInstruction | None = None
    instruction_note: str = ""  # why no instruction was named (when localized)

    @classmethod
    def of_step(cls, step: Step, root: Path | None = None) -> Culprit:
        """The culprit `step`; with the dump's `root`, named by the file its replay judged
        (an HLO step's proto where it reads, not its text)."""
        file = step.file
        if root is not None and step.ir == "hlo":
            from workbench.loader import judged_file

            file = judged_file(root, step)[0] or file
        return cls(step.index, step.pass_name, step.xla_step, file)
