"""The real AdamW training step the noise tests run on (`tests/data/noise/gpt_adamw_mini`):
its backend and its recorded arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.index import scan
from workbench.replay.backends import HloBackend, open_backend

NOISE = Path(__file__).resolve().parents[1] / "data" / "noise"


def recorded_adamw_step() -> tuple[HloBackend, list[Any]]:
    """`module_0022`'s backend (its first step is the reference) and recorded arguments."""
    dump = scan(NOISE / "gpt_adamw_mini")
    module = next(m for m in dump.modules if m.key == "module_0022")
    backend = open_backend(dump.root, module)
    assert isinstance(backend, HloBackend)
    arguments, _ = backend.recorded(module.executions[0])
    return backend, list(arguments)
