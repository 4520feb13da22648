"""The UI-free core must not pull in the TUI (textual, rich) when imported."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = [
    "workbench.model",
    "workbench.index",
    "workbench.gc_pause",
    "workbench.hlo_ir",
    "workbench.formats.xla_names",
    "workbench.formats.xla_dump",
    "workbench.replay.compare",
    "workbench.replay.bisect",
    "workbench.replay.inputs",
    "workbench.replay.backends",
    "workbench.replay.steps",
    "workbench.replay.workers",
    "workbench.replay.triage",
    "workbench.replay.localize",
    "workbench.replay.localize_match",
    "workbench.replay.reduce",
    "workbench.replay.hlo",
    "workbench.formats.iree_replay",
    "workbench.replay.iree_tools",
    "workbench.replay.iree_runner",
    "workbench.formats.mlir_text",
    "workbench.formats.mlir_print_ir",
    "workbench.formats.mlir_ir_tree",
    "workbench.formats.mlir_reports",
    "workbench.formats.mlir_files",
    "workbench.formats.crash_reproducer",
    "workbench.replay.mlir",
    "workbench.replay.mlir.evaluate",
    "workbench.replay.mlir.backend",
    "workbench.formats.mlir_trace",
    "workbench.formats.hlo_text",
    "workbench.formats.hlo_text_attrs",
    "workbench.formats.hlo_text_literal",
    "workbench.formats.hlo_proto",
    "workbench.formats.literal",
    "workbench.formats.snapshot",
    "workbench.check",
    "workbench.protos.hlo_pb2",
    "workbench.protos.mlir_trace_pb2",
    "workbench.diff.normalize",
    "workbench.diff.hlo_text",
    "workbench.diff.mlir_text",
    "workbench.diff.line_diff",
    "workbench.diff.names",
    "workbench.diff.ir_diff",
    "workbench.diff.scopes",
    "workbench.diff.sections",
    "workbench.diff.render",
    "workbench.diff.steps",
    "workbench.watch",
    "workbench.stats",
    "workbench.formats.action_log",
    "workbench.debug",
    "workbench.debug.breakpoints",
    "workbench.debug.facts",
    "workbench.debug.controller",
]


def test_core_imports_no_ui() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in CORE_MODULES)
        + "bad = [m for m in ('textual', 'rich') if m in sys.modules]\n"
        + "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
