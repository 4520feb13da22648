"""How many devices an XLA module runs on, from the header line of its text dumps.

XLA CPU writes no snapshot for an execution over several devices (`--xla_dump_hlo_snapshots`
covers one-device runs only), so such a module is listed without executions; saying why
beats a bare "no recorded execution".
"""

from __future__ import annotations

import re
from pathlib import Path

from workbench.model import Module
from workbench.sources import open_file

HEADER_BYTES = 64 * 1024  # the `HloModule` line is first; its layout can be long
_COUNT_RE = re.compile(rb"[ ,](num_partitions|replica_count)=(\d+)")


def device_count(root: Path, module: Module) -> int:
    """Partitions x replicas, read from the header of the module's first HLO text step; 1
    when no such text says otherwise (a proto-only dump, a module of another format)."""
    for step in module.steps:
        if step.ir != "hlo" or step.text is None or not step.text.file.endswith(".txt"):
            continue
        try:
            with open_file(root / step.text.file) as handle:
                line = handle.read(HEADER_BYTES).partition(b"\n")[0]
        except OSError:
            continue
        if not line.startswith(b"HloModule "):
            continue
        counts = {key: int(value) for key, value in _COUNT_RE.findall(line)}
        return counts.get(b"num_partitions", 1) * counts.get(b"replica_count", 1)
    return 1


def no_snapshot_note(root: Path, module: Module, inputs_option: str = "--inputs") -> str | None:
    """Why a module has no execution, when it runs on several devices; None otherwise."""
    if module.executions:
        return None
    devices = device_count(root, module)
    if devices < 2:
        return None
    return (f"a multi-device module ({devices} devices) has no snapshots (XLA writes none for "
            f"a run over several devices): use --fake-data or {inputs_option}")
