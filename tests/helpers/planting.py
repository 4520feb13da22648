"""Plant a miscompile in a copy of a real XLA dump: one opcode rewritten from a pass on.

What a real compiler bug looks like on disk: every per-pass step from XLA step `from_step` on
(and `*after_optimizations`) computes `new` where the program says `old`. The `.hlo.pb` files
are rewritten through the proto (the `.txt` and `.txt.gz` files by name); the snapshot is left
alone, so its recorded result is the correct one real XLA computed.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

from workbench.formats.xla_names import parse_xla_name
from workbench.protos import hlo_pb2


def _planted(name: str, from_step: int) -> bool:
    """Whether the file `name` is a step from `from_step` on, as the dump reader numbers it
    (a module named `SyncTensorsGraph.1167` has no step 1167)."""
    info = parse_xla_name(name)
    if info is None:
        return False
    if info.kind == "after":
        return True
    return info.kind == "step" and info.xla_step is not None and info.xla_step >= from_step


def plant(source: Path, target: Path, module: str, from_step: int, old: str, new: str) -> int:
    """Copy `source` to `target` with `old` -> `new` in `module`'s steps from `from_step` on;
    returns how many instructions were rewritten (raises if none)."""
    shutil.copytree(source, target)
    count = 0
    for path in sorted(target.glob(f"{module}.*")):
        if not path.is_file() or not _planted(path.name, from_step):
            continue
        if path.name.endswith(".hlo.pb"):
            proto = hlo_pb2.HloProto.FromString(path.read_bytes())
            for computation in proto.hlo_module.computations:
                for instruction in computation.instructions:
                    if instruction.opcode == old:
                        instruction.opcode = new
                        count += 1
            path.write_bytes(proto.SerializeToString())
        elif path.name.endswith((".txt", ".txt.gz")):
            packed = path.name.endswith(".gz")
            data = path.read_bytes()
            text, changed = re.subn(rf"\b{re.escape(old)}\(", f"{new}(",
                                    (gzip.decompress(data) if packed else data).decode())
            path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
            count += changed
    if not count:
        raise ValueError(f"no {old} in {module} from step {from_step:04d} on")
    return count


def plant_in_called(source: Path, target: Path, module: str, from_step: int, caller: str,
                    old: str, new: str) -> int:
    """`plant`, but only inside the computations that `caller` instructions call (the
    reducer of a `reduce-window`, say), in the `.hlo.pb` files; returns how many
    instructions were rewritten (raises if none)."""
    shutil.copytree(source, target)
    count = 0
    for path in sorted(target.glob(f"{module}.*.hlo.pb")):
        if not _planted(path.name, from_step):
            continue
        proto = hlo_pb2.HloProto.FromString(path.read_bytes())
        called = {number for computation in proto.hlo_module.computations
                  for instruction in computation.instructions if instruction.opcode == caller
                  for number in instruction.called_computation_ids}
        for computation in proto.hlo_module.computations:
            if computation.id in called:
                for instruction in computation.instructions:
                    if instruction.opcode == old:
                        instruction.opcode = new
                        count += 1
        path.write_bytes(proto.SerializeToString())
    if not count:
        raise ValueError(f"no {old} called by a {caller} in {module} from step {from_step:04d}")
    return count
