"""Record each PyTorch/XLA step's graph arguments, where the CPU client writes no snapshot:

    from workbench.record.torch_xla import record_sync
    record_sync()          # in place of torch_xla.sync() / xm.mark_step()

At a step boundary torch_xla compiles the pending computation of every live XLA tensor into
one module, `SyncTensorsGraph.N`. Before syncing, this finds those tensors (the XLA tensors
Python holds whose values are pending, in torch_xla's order: by tensor id), asks torch_xla for
the graph's device-data parameters in the entry's parameter order
(`_get_tensors_xla_device_data_node`) and the graph's name (its lowering is `IrToHlo.N`, the
dump's module `SyncTensorsGraph.N`), copies the parameters to the host and syncs.

The step's results are not recorded: the graph also returns tensors only torch_xla holds
(gradients it keeps), so the tensors Python holds are not its result tuple. A replay then has
no recorded result to compare; every step is still judged against the first. torch and
torch_xla are imported when `record_sync` is called.
"""

from __future__ import annotations

import gc
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from workbench.formats.recording import entry_layout, parameter_count
from workbench.record.writer import (
    DEFAULT_CALLS,
    DEFAULT_MAX_BYTES,
    Executable,
    default_folder,
    writer_for,
)

_MODULES: dict[bytes, str] = {}  # the module each graph hash compiled to, in this process
RESULTS_NOTE = "results not recorded: the graph also returns tensors only torch_xla holds"


def record_sync(out: Path | str | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES,
                calls: int = DEFAULT_CALLS) -> None:
    """Record the pending step's graph arguments (the first `calls` of each graph, each at
    most `max_bytes`) to `out` (default: `io/` in the `--xla_dump_to` folder), then sync."""
    import torch
    import torch_xla

    xlac = torch_xla._XLAC
    writer = writer_for(Path(out) if out is not None else default_folder(),
                        f"torch_xla {torch_xla.__version__}")
    with warnings.catch_warnings():  # looking at every object touches non-leaf `.grad`s
        warnings.simplefilter("ignore")
        live = [t for t in gc.get_objects()
                if isinstance(t, torch.Tensor) and t.device.type == "xla"]
    pending = [t for t, needed in zip(live, xlac._check_tensor_need_materialization(live),
                                      strict=True) if needed]
    pending.sort(key=xlac._xla_get_tensor_id)
    arguments = None
    if pending:
        header = xlac._get_xla_tensors_hlo(pending).partition("\n")[0]
        number = header.removeprefix("HloModule ").partition(",")[0].rpartition(".")[2]
        # A graph hashed the same as an earlier one runs that one's cached executable: XLA
        # compiles (and dumps) it once, under the first one's name.
        module = _MODULES.setdefault(bytes(xlac._get_graph_hash(pending)),
                                     f"SyncTensorsGraph.{number}")
        executable = Executable(module, None, None)
        _, data = xlac._get_tensors_xla_device_data_node(pending)
        if parameter_count(entry_layout(header.encode())) != len(data):
            writer.skip(executable, "its device data are not the entry's parameters")
        elif writer.wants(executable, calls) and writer.fits(
                executable, sum(t.element_size() * t.numel() for t in data), max_bytes):
            arguments = [_host_array(t) for t in data]
            writer.skip(executable, RESULTS_NOTE)
    torch_xla.sync()
    if pending and arguments is not None:
        writer.write(executable, arguments, [])


def _host_array(tensor: Any) -> np.ndarray:
    """A tensor on the host as numpy; a 16-bit float numpy lacks (bf16) as raw bytes of its
    width, which the reader views as the parameter's declared type."""
    import torch

    host = tensor.detach().cpu()
    if host.dtype == torch.bfloat16:
        return host.view(torch.int16).numpy().view(np.dtype("V2"))
    return host.numpy()
