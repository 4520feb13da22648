"""Executions from `.npy` files a program's caller recorded (`--recorded DIR`), for dumps that
hold no snapshot (XLA GPU writes none).

DIR holds `inputs/NAME.argK.npy` and, optionally, `outputs/NAME.outK.npy`: K in the order of
JAX's flattening, which is the entry computation's parameter (and result tuple) order; NAME
the jitted function, whose module is `jit_NAME`. Each NAME becomes one execution of every
module so named, replayed like a snapshot, its outputs the recorded result.

`.npy` cannot name the ml_dtypes types (bf16, f8): numpy writes them as raw void bytes of the
same width, read back here as the type the entry parameter (or result) declares.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from workbench.hlo_ir import LiteralValue, Shape
from workbench.model import Dump, Execution
from workbench.replay.inputs import (
    InputError,
    ParamSpec,
    describe_spec,
    is_array_spec,
    load_npy_inputs,
)
from workbench.sources import ReadError

KIND = "recorded-npy"
_FILE = re.compile(r"(?P<name>.+)\.(?P<role>arg|out)(?P<k>\d+)\.npy")


def recorded_names(folder: Path) -> list[str]:
    """The functions whose inputs `folder/inputs` holds."""
    inputs = folder / "inputs"
    if not inputs.is_dir():
        raise InputError(f"{folder}: no inputs/ folder (expected inputs/NAME.argK.npy)")
    names = {m["name"] for p in inputs.iterdir()
             if (m := _FILE.fullmatch(p.name)) and m["role"] == "arg"}
    if not names:
        raise InputError(f"{inputs}: no NAME.argK.npy files")
    return sorted(names)


def attach_recorded(dump: Dump, folder: Path, require: bool = True) -> int:
    """Give every module `jit_NAME` an execution per NAME recorded in `folder` (once); how
    many modules have one. `require`: none is an `InputError`."""
    folder = folder.resolve()
    names = recorded_names(folder)
    attached = 0
    for name in names:
        execution = Execution(f"recorded {name}", str(folder), KIND)
        for module in dump.modules:
            if module.name == f"jit_{name}":
                if execution not in module.executions:
                    module.executions.append(execution)
                attached += 1
    if require and not attached:
        wanted = ", ".join(f"jit_{n}" for n in names)
        raise InputError(f"{folder}: the dump has no module {wanted}")
    return attached


def _files(folder: Path, name: str, role: str) -> list[Path]:
    paths: list[Path] = []
    while (path := folder / ("inputs" if role == "arg" else "outputs")
           / f"{name}.{role}{len(paths)}.npy").is_file():
        paths.append(path)
    return paths


def _typed(array: np.ndarray, spec: ParamSpec) -> np.ndarray:
    """A void array read back as the declared ml_dtypes type of the same width."""
    if is_array_spec(spec) and array.dtype.kind == "V":
        dtype = np.dtype(spec[0])
        if dtype.itemsize == array.dtype.itemsize:
            return array.view(dtype)
    return array


def load_recorded(execution: Execution, specs: list[ParamSpec] | None,
                  result: Shape, result_specs: list[ParamSpec | None]
                  ) -> tuple[list[LiteralValue], LiteralValue | None]:
    """The arguments (checked against `specs`) and the recorded result shaped as `result`."""
    folder = Path(execution.file)
    name = execution.id.removeprefix("recorded ")
    paths = _files(folder, name, "arg")
    if not paths:
        raise ReadError(str(folder / "inputs"), f"no {name}.arg0.npy")
    try:
        raw = load_npy_inputs(tuple(paths), None)
        if specs is not None:
            raw = [_typed(np.asarray(a), s) for a, s in zip(raw, specs, strict=False)]
            _check(paths, raw, specs)
    except InputError as error:
        raise ReadError(str(folder), str(error)) from None
    outputs = _files(folder, name, "out")
    if not outputs:
        return list(raw), None
    try:
        values = load_npy_inputs(tuple(outputs), None)
    except InputError as error:
        raise ReadError(str(folder), str(error)) from None
    values = [_typed(np.asarray(v), s) if s is not None else v
              for v, s in zip(values, result_specs, strict=False)]
    if len(values) != len(result_specs):
        raise ReadError(str(folder / "outputs"), f"{len(values)} {name}.outK.npy files; the "
                        f"entry returns {len(result_specs)} values")
    return list(raw), tuple(values) if result.is_tuple else values[0]


def _check(paths: list[Path], arguments: list[LiteralValue], specs: list[ParamSpec]) -> None:
    """The first argument whose type differs from its parameter's, by file."""
    if len(arguments) != len(specs):
        raise InputError(f"{len(arguments)} .argK.npy files; the entry takes {len(specs)} "
                         f"parameters ({', '.join(describe_spec(s) for s in specs)})")
    for number, (value, spec) in enumerate(zip(arguments, specs, strict=True)):
        array = np.asarray(value)
        dtype, dims = spec
        if not is_array_spec(spec) or array.dtype != dtype or array.shape != tuple(dims):
            raise InputError(f"{paths[number].name}: parameter {number} is "
                             f"{describe_spec(spec)}, the file holds {array.dtype}"
                             f"{list(array.shape)}")
