"""Run a bug-report bundle's `before.hlo` and `after.hlo` with XLA CPU, through JAX, on the
bundle's `inputs.npz`, and say how far apart their results are.

Copied into each bundle as `run_with_jax.py` (`bundle.py`); it needs only numpy and JAX
(written against JAX 0.12, whose Python API has no public way to compile HLO text: it goes
through `jax._src.lib.xla_client`). Never imported by the workbench.

    python run_with_jax.py [BUNDLE_FOLDER]

Exit status 0 when both results agree within the tolerance the README states, 1 when they
differ (the miscompile shows on XLA CPU), 2 when the modules cannot be compiled or run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

ATOL, RTOL = 1e-5, 1e-4  # numpy's isclose rule, as the workbench's f32 default


def load_inputs(folder: Path) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The arguments (and the expected result) saved by the workbench; types numpy lacks
    (bfloat16, float8) are saved as their bits and named in `dtypes`."""
    import ml_dtypes

    saved = np.load(folder / "inputs.npz")
    names = [str(name) for name in saved["dtypes"]]

    def typed(key: str, name: str) -> np.ndarray:
        array = saved[key]
        return array.view(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else array

    arguments = [typed(f"arg{i}", name) for i, name in enumerate(names[1:])]
    expected = typed("expected", names[0]) if "expected" in saved else None
    return arguments, expected


def run_hlo(text: str, arguments: list[np.ndarray]) -> list[np.ndarray]:
    """Compile HLO text with XLA CPU and run it once; its outputs as numpy arrays."""
    import jax
    import jax.extend.backend
    from jax._src.lib import xla_client

    module = xla_client.hlo.hlo_module_from_text(text)
    computation = xla_client.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = xla_client._xla.mlir.xla_computation_to_mlir_module(computation)
    backend = jax.extend.backend.get_backend("cpu")
    device = backend.local_devices()[0]
    executable = backend.compile_and_load(mlir, xla_client.DeviceList((device,)),
                                          xla_client.CompileOptions())
    buffers = [jax.device_put(argument, device) for argument in arguments]
    results = executable.execute_sharded(buffers).disassemble_into_single_device_arrays()
    return [np.asarray(result[0]) for result in results]


def differ(a: Any, b: Any) -> tuple[int, float]:
    """How many elements of `b` are not close to `a`, and the largest |b - a|."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    close = np.isclose(b64, a64, atol=ATOL, rtol=RTOL, equal_nan=True)
    with np.errstate(invalid="ignore"):
        error = float(np.nanmax(np.abs(b64 - a64))) if a64.size else 0.0
    return int(np.count_nonzero(~close)), error


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    arguments, expected = load_inputs(folder)
    try:
        before = run_hlo((folder / "before.hlo").read_text(), arguments)
        after = run_hlo((folder / "after.hlo").read_text(), arguments)
    except Exception as failure:  # XLA's own errors: report them, as the tool would
        print(f"cannot compile or run the modules with XLA CPU: {failure}", file=sys.stderr)
        return 2
    print(f"XLA CPU, {len(arguments)} argument(s)")
    for index, (b, a) in enumerate(zip(before, after, strict=True)):
        count, error = differ(b, a)
        print(f"output {index}: before.hlo {np.array2string(b.ravel()[:6], precision=7)}")
        print(f"output {index}: after.hlo  {np.array2string(a.ravel()[:6], precision=7)}")
        print(f"output {index}: {count} of {b.size} elements differ beyond atol {ATOL:g}, "
              f"rtol {RTOL:g} (max abs {error:.3g})")
    if expected is not None:
        count, error = differ(expected, before[0])
        print(f"before.hlo against the expected value the workbench saved: {count} "
              f"element(s) differ (max abs {error:.3g})")
    mismatch = any(differ(b, a)[0] for b, a in zip(before, after, strict=True))
    print("the pass's change shows on XLA CPU: after.hlo differs from before.hlo" if mismatch
          else "before.hlo and after.hlo agree on XLA CPU")
    return 1 if mismatch else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
