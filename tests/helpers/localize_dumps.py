"""Small two-step XLA dump folders written by tests: a module before and after a pass (HLO
text, named as XLA names per-pass dumps) and an HloSnapshot with the arguments."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.formats.hlo_text import parse_hlo_text
from workbench.formats.literal_write import literal_to_proto
from workbench.protos import hlo_pb2

BEFORE = "module_0001.t.0000.p.after_pipeline-start.before_planted.txt"
AFTER = "module_0001.t.0001.p.after_planted.before_pipeline-end.txt"


def write_dump(root: Path, before: str, after: str, arguments: list[np.ndarray]) -> Path:
    """A dump folder at `root`: step 0000 is `before`, step 0001 (pass `planted`) `after`."""
    root.mkdir(parents=True)
    (root / BEFORE).write_text(before)
    (root / AFTER).write_text(after)
    entry = parse_hlo_text(before, BEFORE).entry
    snapshot = hlo_pb2.HloSnapshot()
    for parameter, argument in zip(entry.parameters, arguments, strict=True):
        snapshot.arguments.append(literal_to_proto(argument, parameter.shape))
    (root / "module_0001.t.snapshot.0.pb").write_bytes(snapshot.SerializeToString())
    return root
