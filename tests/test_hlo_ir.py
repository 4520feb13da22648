"""Source locations: instructions of jit_ln resolve, through the StackFrames tables, to the
lines of program.py that wrote them, whichever reader (text or proto) loaded the module."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.formats.hlo_proto import read_hlo_proto
from workbench.formats.hlo_text import parse_hlo_text
from workbench.hlo_ir import HloModule

LAYERNORM = Path("xla/layernorm")
# What each JAX primitive of ln() looks like in program.py's source text.
SPELLING = {"rsqrt": "rsqrt", "sub": "-", "integer_pow": "**", "mul": "*", "add": "+",
            "reduce_sum": "mean", "div": "mean"}


def both_readers(path: Path) -> tuple[HloModule, HloModule]:
    text = parse_hlo_text(Path(f"{path}.txt").read_text(), path.name)
    proto = read_hlo_proto(Path(f"{path}.hlo.pb").read_bytes(), path.name)
    return text, proto


@pytest.mark.parametrize("stem", [
    "module_0010.jit_ln.before_optimizations",
    "module_0010.jit_ln.0028.HLO_passes_after_layout_assignment.after_fusion"
    ".before_fusion-wrapper",
    "module_0010.jit_ln.cpu_after_optimizations",
])
def test_jit_ln_resolves_to_program_py(corpus: Path, stem: str) -> None:
    program = (corpus / LAYERNORM / "program.py").read_text().splitlines()
    text, proto = both_readers(corpus / LAYERNORM / stem)
    assert text.source == proto.source
    resolved = spelled = 0
    for computation in text.computations:
        twin = proto.by_name[computation.name]
        for instruction in computation.instructions:
            location = text.source_location(instruction)
            assert location == proto.source_location(twin.by_name[instruction.name])
            metadata = instruction.metadata
            if location is None or metadata is None or not metadata.op_name.startswith("jit("):
                continue
            primitive = metadata.op_name.rsplit("/", 1)[-1]
            file, line = location
            assert file == "program.py"
            frame = text.source.stack_frames[metadata.stack_frame_id]
            place = text.source.file_locations[frame.file_location_id]
            assert place.line == line
            # Columns are 0-based and the end is exclusive, as Python's ast reports them.
            written = program[line - 1][place.column : place.end_column]
            if primitive in SPELLING:  # others (broadcast_in_dim, ...) have no spelling
                assert SPELLING[primitive] in written, (instruction.name, written)
                spelled += 1
            assert text.source.function_names[place.function_name_id] == "ln"
            # The caller: the jit call on line 6 of program.py.
            caller = text.source.frame_location(frame.parent_frame_id)
            assert caller is not None and caller[:2] == ("program.py", 6)
            assert "jax.jit(ln)" in program[caller[1] - 1]
            resolved += 1
    assert resolved >= 5 and spelled >= 5
