"""A culprit whose change is inside a computation it calls (a reducer, a comparator) is named
with the changed instruction there, and borrows an op_name and source when it has none."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.helpers.planting import plant_in_called
from workbench.formats.hlo_text import parse_hlo_text
from workbench.index import scan
from workbench.model import Step
from workbench.output.json_shapes import localization_json
from workbench.replay.localize.localizer import Localizer, localize_steps
from workbench.replay.localize.result import Localization
from workbench.replay.localize.text import localization_lines
from workbench.replay.steps import open_replay

GNN = Path(__file__).parents[2] / "data" / "localize_inside" / "gnn_segment_sum_bf16"


def _pair(root: Path) -> Localization:
    """XLA step 0025 (flatten-call-graph) against 0024 of the real GNN step's dump."""
    module = next(m for m in scan(root).modules if m.executions)
    with open_replay(root, module, module.executions[0]) as replay:
        steps, arguments = replay.steps, replay.inputs.arguments
    (after,) = [s for s in steps if s.xla_step == 25]
    return localize_steps(root, steps[steps.index(after) - 1], after, arguments)


def test_a_bug_in_a_reducer_is_named_inside_it(tmp_path: Path) -> None:
    """A GNN step (segment_sum in bf16, real XLA CPU, JAX 0.12): the tree-reduction rewriter
    made `reduce-window`s with no metadata, and from flatten-call-graph on the first one
    has a reducer of its own. `add -> subtract` planted in it is named at the reduce-window,
    which said nothing of where; now the subtract in its reducer is named, with the reducer's
    op_name and source line, borrowed and said to be."""
    clean = _pair(GNN)
    assert clean.instruction is None and "no departure" in clean.explanation
    planted = tmp_path / "planted"
    assert plant_in_called(GNN, planted, "module_0008", 25, "reduce-window", "add",
                           "subtract")
    result = _pair(planted)
    ref = result.instruction
    assert ref is not None, result.explanation
    assert (ref.name, ref.opcode) == ("reduce-window", "reduce-window")
    assert ref.inside == "reduce_sum.5 (subtract, was add) in region_1.3, its reducer"
    assert ref.op_name == "jit(step)/jvp()/reduce_sum"
    assert ref.source.endswith("program.py:17")
    assert ref.metadata_from.startswith("reduce_sum.5 in region_1.3")
    lines = "\n".join(localization_lines(result))
    assert "changed inside: reduce_sum.5 (subtract, was add) in region_1.3" in lines
    assert "borrowed from reduce_sum.5" in lines
    data = localization_json(result)["instruction"]
    assert data["inside"] == ref.inside and data["metadata_from"] == ref.metadata_from


SORT = """HloModule t, entry_computation_layout={{(f32[6]{{0}})->f32[6]{{0}}}}

%less (a: f32[], b: f32[]) -> pred[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %lt = pred[] compare(%a, %b), direction={direction}, metadata={{op_name="jit(f)/lt"}}
}}

ENTRY %main (x: f32[6]) -> f32[6] {{
  %x = f32[6]{{0}} parameter(0)
  ROOT %sorted = f32[6]{{0}} sort(%x), dimensions={{0}}, to_apply=%less
}}
"""


def test_a_changed_comparator_is_named_and_lends_its_metadata() -> None:
    before, after = (parse_hlo_text(SORT.format(direction=d)) for d in ("LT", "GT"))
    step = Step(0, "p", "hlo", "after-pass")
    result = Localizer(before, after, [np.array([3, 1, 2, 6, 5, 4], np.float32)]).run(
        step, step)
    ref = result.instruction
    assert ref is not None and ref.name == "sorted"
    assert ref.inside == "lt (compare, its attributes or shape changed) in less, its comparator"
    assert ref.op_name == "jit(f)/lt"
    assert ref.metadata_from == "lt in less, the changed instruction in its comparator"
