"""A convert from an integer to a float type does not round at random in the noise stage: XLA
rounds it to nearest, exactly for any integer the type holds (an int8 quantizer's clip
bounds, `jnp.clip(x, -127, 127)`, are s32 constants converted to f32).

`tests/data/noise/int8_quant_mini` is a real JAX 0.12 dump (XLA CPU, `program.py` beside it;
a few of its per-pass steps, as `.hlo.pb`, and the snapshot): per-channel int8 weight
quantization, round, clip, a cast to int8, an int8 x int8 -> int32 dot, dequantized. Each
column's largest weight quantizes to exactly 127. Moved by a random fraction of an ulp, the
clip bound 127.0 became 126.99999 in some samples, the cast to int8 truncated it to 126, and
the noise stage counted a flip at every column's largest weight: enough spread to hide a
clip bound miscompiled to 126.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from workbench.index import scan
from workbench.loader import read_hlo_file, read_snapshot_file
from workbench.model import Source
from workbench.protos import hlo_pb2
from workbench.replay.bisect import bisect_replay
from workbench.replay.judge.noise.run import noise_of
from workbench.replay.steps import open_replay

QUANT = Path(__file__).resolve().parents[1] / "data" / "noise" / "int8_quant_mini"
MODULE = "module_0000.jit_qmatmul"


def _widened_arguments() -> list[np.ndarray]:
    (snapshot,) = QUANT.glob(f"{MODULE}.snapshot.*.pb")
    arguments = read_snapshot_file(QUANT, Source(snapshot.name)).arguments
    return [np.asarray(a, dtype=np.float64) for a in arguments]


def test_clip_bounds_converted_from_integers_do_not_flip_the_int8_cast() -> None:
    module = read_hlo_file(QUANT, Source(f"{MODULE}.before_optimizations.hlo.pb"), "proto")
    converts = [i for c in module.computations for i in c.instructions
                if i.opcode == "convert" and i.shape.element_type == "f32"]
    assert converts  # the clip bounds: s32 -127 and 127 converted to f32
    noise = noise_of(module, _widened_arguments())
    assert noise.discontinuities == ()


def _plant_clip_bound(target: Path, from_step: int) -> int:
    """Copy the dump with the f32 clip bounds +-127 made +-126 from XLA step `from_step` on
    (and in the optimized module), as a miscompiled constant would leave it."""
    shutil.copytree(QUANT, target)
    changed = 0
    for path in sorted(target.glob(f"{MODULE}.*.hlo.pb")):
        step = path.name.split(".")[2]
        if not ((step.isdigit() and int(step) >= from_step) or "after_optimizations" in step):
            continue
        proto = hlo_pb2.HloProto.FromString(path.read_bytes())
        for computation in proto.hlo_module.computations:
            for instruction in computation.instructions:
                values = instruction.literal.f32s
                if instruction.opcode == "constant" and len(values) == 1 \
                        and abs(values[0]) == 127.0:
                    values[0] = np.copysign(126.0, values[0])
                    changed += 1
        path.write_bytes(proto.SerializeToString())
    return changed


def test_a_clip_bound_miscompiled_is_named(tmp_path: Path) -> None:
    target = tmp_path / "dump"
    assert _plant_clip_bound(target, 23) >= 2
    (module,) = scan(target).modules
    (execution,) = module.executions
    with open_replay(target, module, execution) as replay:
        verdict = bisect_replay(replay)
    assert verdict.culprit is not None
    assert verdict.culprit.step.xla_step == 23


def test_the_dump_as_made_is_ok() -> None:
    (module,) = scan(QUANT).modules
    (execution,) = module.executions
    with open_replay(QUANT, module, execution) as replay:
        verdict = bisect_replay(replay)
    assert verdict.culprit is None
    assert verdict.outcome.kind.value == "ok"

