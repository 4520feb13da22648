"""Executions from `.npy` files a program's caller recorded (`--recorded DIR`, or a recording
the index found in the dump: `formats/recording.py`), for dumps that hold no snapshot.

DIR holds `inputs/NAME.argK.npy` and, optionally, `outputs/NAME.outK.npy`: K in the order of
the entry computation's parameters (and result tuple), which is JAX's flattening order. With
`recording.json` (what `workbench.record` writes) each call names its module; without, NAME's
module is `jit_NAME`. Each call becomes one execution of its module, replayed like a snapshot,
its outputs the recorded result.

`.npy` cannot name the ml_dtypes types (bf16, f8): numpy writes them as raw void bytes of the
same width, read back here as the type the entry parameter (or result) declares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from workbench.formats.recording import (
    ID_PREFIX,
    KIND,
    MANIFEST,
    Recording,
    attach_recording,
    call_files,
    read_recording,
)
from workbench.hlo_ir import LiteralValue, Shape
from workbench.model import Dump, Execution
from workbench.replay.inputs import (
    InputError,
    ParamSpec,
    describe_spec,
    is_array_spec,
    load_npy_inputs,
)
from workbench.replay.judge.compare import describe_type
from workbench.sources import ReadError, open_file

__all__ = ["KIND", "RecordingFit", "attach_recorded", "load_recorded", "recorded_names",
           "recording_fit"]


def _read_folder(folder: Path) -> Recording:
    """The recording in `folder`; raises InputError naming what is wrong with it."""
    inputs = folder / "inputs"
    if not inputs.is_dir():
        raise InputError(f"{folder}: no inputs/ folder (expected inputs/NAME.argK.npy)")
    names = [f"inputs/{p.name}" for p in inputs.iterdir()]
    if (folder / MANIFEST).is_file():
        names.append(MANIFEST)
    try:
        recording = read_recording(folder, "", names)
    except ReadError as error:
        raise InputError(f"{folder / error.file}: {error.reason}") from None
    if not recording.calls:
        raise InputError(f"{inputs}: no NAME.argK.npy files")
    return recording


def recorded_names(folder: Path) -> list[str]:
    """The calls whose inputs `folder/inputs` holds."""
    return [call.name for call in _read_folder(folder).calls]


def attach_recorded(dump: Dump, folder: Path, require: bool = True) -> int:
    """Give each call recorded in `folder` an execution of its module (once); how many modules
    have one. `require`: none is an `InputError`. The folder named replaces the recordings the
    index found in the dump (their calls may share names); one inside the dump is named
    relative to it, as the index names it."""
    folder = folder.resolve()
    recording = _read_folder(folder)
    try:
        place = folder.relative_to(dump.root.resolve()).as_posix()
        place = "" if place == "." else place
    except ValueError:
        place = str(folder)
    recording.folder = place
    prefix = f"{place}/inputs/" if place else "inputs/"
    for module in dump.modules:
        module.executions = [e for e in module.executions
                             if e.kind != KIND or e.file.startswith(prefix)]
    attached, _ = attach_recording(dump, recording)
    if require and not attached:
        wanted = ", ".join(sorted({call.module for call in recording.calls}))
        raise InputError(f"{folder}: the dump has no module {wanted}")
    return attached


def _typed(array: np.ndarray, spec: ParamSpec) -> np.ndarray:
    """A void array read back as the declared ml_dtypes type of the same width."""
    if is_array_spec(spec) and array.dtype.kind == "V":
        dtype = np.dtype(spec[0])
        if dtype.itemsize == array.dtype.itemsize:
            return array.view(dtype)
    return array


def load_recorded(root: Path, execution: Execution, specs: list[ParamSpec] | None,
                  result: Shape, result_specs: list[ParamSpec | None]
                  ) -> tuple[list[LiteralValue], LiteralValue | None]:
    """The arguments (checked against `specs`) and the recorded result shaped as `result`."""
    arg0 = root / execution.file
    folder = arg0.parent.parent
    name = execution.id.removeprefix(ID_PREFIX)
    paths = list(call_files(arg0, "arg"))
    if not paths:
        raise ReadError(str(folder / "inputs"), f"no {name}.arg0.npy")
    try:
        raw = load_npy_inputs(tuple(paths), None)
        if specs is not None:
            raw = [_typed(np.asarray(a), s) for a, s in zip(raw, specs, strict=False)]
            _check(paths, raw, specs)
    except InputError as error:
        raise ReadError(str(folder), str(error)) from None
    outputs = list(call_files(arg0, "out"))
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


@dataclass
class RecordingFit:
    """Whether a recorded call's argument files fit the module's entry parameters, read from
    the files' `.npy` headers alone (no array is loaded): `misfits` says what differs, the
    first parameter that differs first; `fits` the parameters that agree; `recorded` the
    files' types in parameter order."""

    misfits: list[str] = field(default_factory=list)
    fits: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.misfits


def _npy_type(path: Path) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape a `.npy` file's header declares; raises OSError or ValueError."""
    with open_file(path) as stream:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    return np.dtype(dtype), tuple(shape)


def recording_fit(root: Path, execution: Execution, specs: list[ParamSpec]) -> RecordingFit:
    """How the call recorded as `execution` fits entry parameters `specs` (what `r` and `b`
    would meet when `load_recorded` reads the arrays)."""
    paths = list(call_files(root / execution.file, "arg"))
    fit = RecordingFit()
    if len(paths) != len(specs):
        fit.misfits.append(f"{len(paths)} .argK.npy files; the entry takes {len(specs)} "
                           f"parameters ({', '.join(describe_spec(s) for s in specs)})")
    for number, (path, spec) in enumerate(zip(paths, specs, strict=False)):
        declared = describe_spec(spec)
        try:
            dtype, dims = _npy_type(path)
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            fit.misfits.append(f"parameter {number}: {path.name} cannot be read as .npy: "
                               f"{reason}")
            fit.recorded.append("?")
            continue
        if is_array_spec(spec) and dtype.kind == "V" and dtype.itemsize == spec[0].itemsize:
            dtype = spec[0]  # an ml_dtypes type numpy wrote as raw bytes (`_typed`)
        recorded = describe_type(dtype, dims)
        fit.recorded.append(recorded)
        if is_array_spec(spec) and dtype == spec[0] and dims == tuple(spec[1]):
            fit.fits.append(f"parameter {number}: {declared}")
        else:
            fit.misfits.append(f"parameter {number}: the module takes {declared}, "
                               f"{path.name} holds {recorded}")
    return fit
