"""Where a replay's inputs come from: an execution's recorded arguments, `.npy` files, or
seeded fake data shaped like the entry parameters.

Fake data makes a module replayable without a snapshot (as mlir_replay does with random
inputs): every step is still compared with the reference computed on the same data, so a pass
that changes the numbers still shows up, though there is no recorded result to check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol, Union

import numpy as np

from workbench.hlo_ir import LiteralValue
from workbench.model import Execution
from workbench.replay.judge.compare import describe_array, describe_type, dtype_category
from workbench.replay.processes import memory
from workbench.sources import open_file

if TYPE_CHECKING:
    from typing_extensions import TypeIs

# The type of one entry parameter: (dtype, dims) of an array, or a tuple of parameter types.
ArraySpec = tuple[np.dtype, tuple[int, ...]]
ParamSpec = Union[ArraySpec, tuple["ParamSpec", ...]]  # noqa: UP007


class InputSource(Protocol):
    """What inputs are read from: a replay backend (`backends.Backend` is one), seen only
    through the methods inputs need, so this module sits below the backends."""

    def parameter_specs(self) -> list[ParamSpec] | None: ...

    def non_negative_parameters(self) -> frozenset[int]: ...

    def recorded(self, execution: Execution) -> tuple[list[LiteralValue], LiteralValue | None]:
        ...


class InputError(Exception):
    """The inputs cannot be had (unreadable file, wrong count or shape); says what to do."""


@dataclass(frozen=True)
class InputSpec:
    """How the user asked for inputs: `.npy` files, fake data, or (default) the execution's."""

    npy: tuple[Path, ...] = ()
    fake_data: bool = False
    seed: int = 0


@dataclass
class ReplayInputs:
    """The arguments to evaluate every step on, and the result the real run recorded."""

    arguments: list[LiteralValue]
    recorded: LiteralValue | None = None
    origin: str = ""  # what the user reads: "snapshot.-17687811", "fake data (seed 0)"
    # How they were made (`resolve_inputs`), so a worker can make them again itself rather
    # than receive them; None when they were given some other way.
    spec: InputSpec | None = None
    execution: Execution | None = None


@dataclass(frozen=True)
class EntryParameters:
    """The entry's parameter types, and the numbers of those fake data draws non-negative
    (their sign reaches a root, a logarithm or a power's exponent:
    `replay/hlo/parameter_signs.py`)."""

    specs: list[ParamSpec]
    non_negative: frozenset[int] = frozenset()


def entry_parameters(source: InputSource) -> EntryParameters | None:
    """`source`'s entry parameters; None when their types are unknown."""
    specs = source.parameter_specs()
    return None if specs is None else EntryParameters(specs, source.non_negative_parameters())


def is_array_spec(spec: ParamSpec) -> TypeIs[ArraySpec]:
    return len(spec) == 2 and isinstance(spec[0], np.dtype)


def describe_spec(spec: ParamSpec) -> str:
    if is_array_spec(spec):
        dtype, dims = spec
        return describe_type(dtype, dims)
    return "(" + ", ".join(describe_spec(s) for s in spec) + ")"


def fake_value(spec: ParamSpec, rng: np.random.Generator,
               non_negative: bool = False) -> LiteralValue:
    """Random data of one parameter type: floats ~ N(0, 1), small integers, random bools;
    where `non_negative`, the magnitudes of the same draws.

    Integers stay within [-8, 8) (unsigned [0, 16)) so shifts, divisions and indexing that a
    program does on them stay in the range real data usually has.
    """
    if not is_array_spec(spec):
        return tuple(fake_value(s, rng, non_negative) for s in spec)
    dtype, dims = spec
    category = dtype_category(dtype)
    if category == "bool":
        return rng.integers(0, 2, size=dims).astype(np.bool_)
    if category == "int":
        unsigned = dtype.kind == "u" or dtype.name.startswith("uint")
        low, high = (0, 16) if unsigned else (-8, 8)
        if dtype.itemsize == 1 and dtype.name in ("int4", "uint4", "int2", "uint2"):
            low, high = (0, 4) if unsigned else (-2, 2)
        integers = rng.integers(low, high, size=dims)
        return (np.abs(integers) if non_negative else integers).astype(dtype)
    if category == "complex":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
    values = rng.standard_normal(dims)
    return (np.abs(values) if non_negative else values).astype(dtype)


def _spec_bytes(spec: ParamSpec) -> int:
    if is_array_spec(spec):
        return memory.array_bytes(np.dtype(spec[0]), tuple(spec[1]))
    return sum(_spec_bytes(element) for element in spec)


def fake_inputs(specs: list[ParamSpec], seed: int = 0,
                non_negative: frozenset[int] = frozenset()) -> list[LiteralValue]:
    """Seeded random arguments: the same seed gives the same data, run after run. The
    parameters numbered in `non_negative` take the same draws' magnitudes."""
    rng = np.random.default_rng(seed)
    return [fake_value(spec, rng, number in non_negative) for number, spec in enumerate(specs)]


def fake_origin(seed: int, non_negative: frozenset[int]) -> str:
    """What the user reads of fake data: its seed, and how many parameters are non-negative."""
    if not non_negative:
        return f"fake data (seed {seed})"
    count = len(non_negative)
    return (f"fake data (seed {seed}; {count} parameter{'s' if count > 1 else ''} non-negative: "
            f"{'their' if count > 1 else 'its'} sign reaches a root, a logarithm or an exponent)")


def _matches(value: LiteralValue, spec: ParamSpec) -> bool:
    if not is_array_spec(spec):
        return isinstance(value, tuple) and len(value) == len(spec) and all(
            _matches(v, s) for v, s in zip(value, spec, strict=True))
    dtype, dims = spec
    return isinstance(value, np.ndarray) and value.dtype == dtype and value.shape == tuple(dims)


def _check_npy_size(stream: BinaryIO) -> None:
    """Refuse, from its header alone, a `.npy` file whose array is over the memory limit."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    else:
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    memory.check(memory.array_bytes(dtype, shape), f"an array {dtype}{list(shape)}")


def _load_npy(path: Path) -> np.ndarray:
    """The array of a `.npy` file (a regular file only: a FIFO would wait for a writer), in
    the machine's byte order: a big-endian file holds the same numbers."""
    with open_file(path) as stream:
        _check_npy_size(stream)
        stream.seek(0)
        value = np.load(stream, allow_pickle=False)
    if not value.dtype.isnative:
        value = value.astype(value.dtype.newbyteorder("="))
    return value


def load_npy_inputs(paths: tuple[Path, ...], specs: list[ParamSpec] | None) -> list[LiteralValue]:
    """Arrays from `.npy` files, checked against the entry parameters when they are known."""
    arguments: list[LiteralValue] = []
    for path in paths:
        try:
            arguments.append(_load_npy(path))
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            raise InputError(f"{path}: cannot read as .npy: {reason}") from None
        except memory.OverMemoryLimit as error:
            raise InputError(f"{path}: {error}") from None
    if specs is not None:
        if len(specs) != len(arguments):
            raise InputError(f"the entry takes {len(specs)} parameters "
                             f"({', '.join(describe_spec(s) for s in specs)}); "
                             f"{len(arguments)} .npy files were given")
        for number, (value, spec) in enumerate(zip(arguments, specs, strict=True)):
            if not _matches(value, spec):
                raise InputError(f"{paths[number]}: parameter {number} is {describe_spec(spec)}, "
                                 f"the file holds {describe_array(value)}")
    return arguments


def resolve_inputs(backend: InputSource, execution: Execution | None, spec: InputSpec,
                   parameters: Callable[[], EntryParameters | None] | None = None
                   ) -> ReplayInputs:
    """The inputs a replay runs on, by the user's choice; raises `InputError`.
    `parameters` reads the entry's parameters (default: from the backend, here)."""
    read = parameters or (lambda: entry_parameters(backend))
    if spec.npy:
        entry = read()
        return ReplayInputs(load_npy_inputs(spec.npy, entry.specs if entry else None),
                            origin=", ".join(p.name for p in spec.npy), spec=spec)
    if spec.fake_data:
        entry = read()
        if entry is None:
            raise InputError("the entry parameters' types are unknown, so fake data cannot be "
                             "made; give the inputs as .npy files")
        try:
            memory.check(sum(_spec_bytes(s) for s in entry.specs),
                         f"fake data for {', '.join(describe_spec(s) for s in entry.specs)}")
        except memory.OverMemoryLimit as error:
            raise InputError(str(error)) from None
        return ReplayInputs(fake_inputs(entry.specs, spec.seed, entry.non_negative),
                            origin=fake_origin(spec.seed, entry.non_negative), spec=spec)
    if execution is None:
        raise InputError("this module has neither a snapshot nor a recording: use --fake-data "
                         "for seeded random inputs, give the inputs as .npy files, or record "
                         "the program's calls (workbench.record.jax, workbench.record.torch_xla)")
    arguments, recorded = backend.recorded(execution)
    return ReplayInputs(list(arguments), recorded, origin=execution.id, spec=spec,
                        execution=execution)
