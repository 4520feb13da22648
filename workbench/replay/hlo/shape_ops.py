"""Ops that move data without computing: values are logical row-major arrays, so only
`bitcast` looks at layouts (it reinterprets the physical buffer after layout assignment)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import numpy as np

from workbench.hlo_ir import Instruction, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo import dtypes
from workbench.replay.hlo.registry import Value, handles
from workbench.replay.processes import memory

if TYPE_CHECKING:
    from workbench.replay.hlo.interpreter import Interpreter


def _dtype(shape: Shape) -> np.dtype:
    return dtypes.dtype_of(shape.element_type)


T = TypeVar("T")


def _attribute(instruction: Instruction, value: T | None, what: str) -> T:
    if value is None:
        raise EvaluationError(f"{instruction.name}: {instruction.opcode} without {what}")
    return value


@handles("parameter")
def parameter(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    raise EvaluationError(f"{instruction.name}: parameter evaluated outside a call")


@handles("constant")
def constant(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    if instruction.literal_elided:
        raise Unsupported("elided constant")
    literal = instruction.literal
    if literal is None:
        raise EvaluationError(f"{instruction.name}: constant without a value")
    if isinstance(literal, tuple):
        return literal
    if isinstance(literal, np.ndarray):
        return literal
    return np.asarray(literal, dtype=_dtype(instruction.shape))


@handles("tuple")
def make_tuple(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return tuple(operands)


@handles("get-tuple-element")
def get_tuple_element(interpreter: object, instruction: Instruction,
                      operands: list[Value]) -> Value:
    index = _attribute(instruction, instruction.tuple_index, "index")
    return operands[0][index]


@handles("copy", "opt-barrier", "domain")
def identity(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return operands[0]


@handles("add-dependency")
def add_dependency(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return operands[0]


@handles("after-all")
def after_all(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return ()  # a token carries no data


@handles("copy-start")
def copy_start(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return (operands[0], operands[0], np.zeros((), np.uint32))


@handles("copy-done")
def copy_done(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return operands[0][0]


@handles("broadcast")
def broadcast(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    x = np.asarray(operands[0])
    dimensions = list(instruction.dimensions or ())
    if len(dimensions) != x.ndim:
        raise EvaluationError(
            f"{instruction.name}: broadcast dimensions {dimensions} for rank {x.ndim}")
    if dimensions != sorted(dimensions):
        order = sorted(range(len(dimensions)), key=dimensions.__getitem__)
        x = x.transpose(order)
        dimensions = sorted(dimensions)
    out = instruction.shape.dims
    shape = [1] * len(out)
    for axis, dimension in enumerate(dimensions):
        shape[dimension] = x.shape[axis]
    return np.broadcast_to(x.reshape(shape), out)


@handles("reshape")
def reshape(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return np.reshape(operands[0], instruction.shape.dims)


@handles("transpose")
def transpose(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return np.transpose(operands[0], instruction.dimensions)


@handles("reverse")
def reverse(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    dimensions = tuple(instruction.dimensions or ())
    return np.flip(operands[0], dimensions) if dimensions else operands[0]


@handles("slice")
def slice_(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    dimensions = _attribute(instruction, instruction.slice, "slice")
    return operands[0][tuple(slice(d.start, d.limit, d.stride) for d in dimensions)]


@handles("concatenate")
def concatenate(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    axis = _attribute(instruction, instruction.dimensions, "dimensions")[0]
    return np.concatenate(operands, axis=axis)


@handles("iota")
def iota(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    axis = _attribute(instruction, instruction.dimensions, "iota_dimension")[0]
    dims = instruction.shape.dims
    dtype = _dtype(instruction.shape)
    values = dtypes.convert(np.arange(dims[axis], dtype=np.int64), dtype)
    shape = [1] * len(dims)
    shape[axis] = dims[axis]
    return np.broadcast_to(values.reshape(shape), dims)


def pad_array(x: np.ndarray, value: np.ndarray, low: list[int], high: list[int],
              interior: list[int], where: str) -> np.ndarray:
    """Edge and interior padding; negative edge padding removes elements (after interior).
    The padded array is sized from the attributes before it is made (pad, and the base
    dilation of convolution and reduce-window, may grow a small operand past any memory)."""
    dilated = [(n - 1) * (i + 1) + 1 if n else 0 for n, i in zip(x.shape, interior, strict=True)]
    full = [max(lo, 0) + d + max(hi, 0) for lo, d, hi in zip(low, dilated, high, strict=True)]
    memory.check(memory.array_bytes(x.dtype, tuple(full)),
                 f"{where}: {x.dtype}[{','.join(map(str, x.shape))}] padded or dilated to "
                 f"[{','.join(map(str, full))}]")
    out = np.full(full, value, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + d, i + 1)
              for lo, d, i in zip(low, dilated, interior, strict=True))] = x
    return out[tuple(slice(-min(lo, 0), f - (-min(hi, 0)))
                     for lo, hi, f in zip(low, high, full, strict=True))]


@handles("pad")
def pad(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    x, value = operands
    config = _attribute(instruction, instruction.padding_config, "padding")
    return pad_array(np.asarray(x), value, [d.edge_padding_low for d in config],
                     [d.edge_padding_high for d in config],
                     [d.interior_padding for d in config], instruction.name)


def _start_indices(operands: list[Value], rank: int) -> list[int]:
    if len(operands) == 1 and np.ndim(operands[0]) == 1:  # older form: one index vector
        return [int(i) for i in operands[0]]
    if len(operands) != rank:
        raise EvaluationError(f"{len(operands)} start indices for rank {rank}")
    return [int(i) for i in operands]


def clamped_starts(starts: list[int], dims: tuple[int, ...], sizes: tuple[int, ...]) -> list[int]:
    """XLA clamps dynamic start indices so the slice stays inside the operand (a slice
    larger than the operand is an error: no start keeps it inside)."""
    if len(sizes) != len(dims) or any(not 0 <= n <= d for n, d in zip(sizes, dims, strict=True)):
        raise ValueError(f"a slice of size [{','.join(map(str, sizes))}] does not fit "
                              f"in an operand of [{','.join(map(str, dims))}]")
    return [min(max(s, 0), d - n) for s, d, n in zip(starts, dims, sizes, strict=True)]


@handles("dynamic-slice")
def dynamic_slice(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    x = np.asarray(operands[0])
    sizes = tuple(_attribute(instruction, instruction.dynamic_slice_sizes, "sizes"))
    starts = clamped_starts(_start_indices(operands[1:], x.ndim), x.shape, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))]


@handles("dynamic-update-slice")
def dynamic_update_slice(interpreter: object, instruction: Instruction,
                         operands: list[Value]) -> Value:
    x = np.asarray(operands[0])
    update = np.asarray(operands[1])
    starts = clamped_starts(_start_indices(operands[2:], x.ndim), x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape, strict=True))] = update
    return out


def _major_to_minor(shape: Shape) -> list[int]:
    if shape.layout is None or not shape.dims:
        return list(range(len(shape.dims)))
    if sorted(shape.layout) != list(range(len(shape.dims))):
        raise EvaluationError(f"layout {shape.layout} does not fit {shape}")
    return list(reversed(shape.layout))


@handles("bitcast")
def bitcast(interpreter: Interpreter, instruction: Instruction, operands: list[Value]) -> Value:
    """Reinterpret the operand's physical buffer (its layout order) as the result's."""
    x = np.asarray(operands[0])
    result = instruction.shape
    if "T(" in result.layout_extra:
        raise Unsupported("bitcast with a tiled layout")
    source = interpreter_operand_shape(interpreter, instruction)
    flat = np.transpose(x, _major_to_minor(source)).reshape(-1)
    target = dtypes.dtype_of(result.element_type)
    if flat.dtype != target:
        if flat.dtype.itemsize != target.itemsize:
            raise EvaluationError(f"{instruction.name}: bitcast changes the element size")
        flat = dtypes.contiguous(flat).view(target)
    order = _major_to_minor(result)
    if flat.size != result.size:
        raise EvaluationError(
            f"{instruction.name}: bitcast of {flat.size} elements to {result}")
    physical = flat.reshape([result.dims[d] for d in order])
    return np.transpose(physical, np.argsort(order))


def interpreter_operand_shape(interpreter: Interpreter, instruction: Instruction) -> Shape:
    return interpreter.operand_shape(instruction, 0)


@handles("get-dimension-size")
def get_dimension_size(interpreter: Interpreter, instruction: Instruction,
                       operands: list[Value]) -> Value:
    shape = interpreter_operand_shape(interpreter, instruction)
    axis = _attribute(instruction, instruction.dimensions, "dimensions")[0]
    if shape.dynamic and shape.dynamic[axis]:
        raise Unsupported("get-dimension-size of a dynamic dimension")
    return np.array(shape.dims[axis], np.int32)


@handles("set-dimension-size")
def set_dimension_size(interpreter: Interpreter, instruction: Instruction,
                       operands: list[Value]) -> Value:
    """Marks a dimension dynamic with a runtime size. Values are held at their static bound,
    so only a size equal to the bound (a static array after all) is evaluated."""
    x, size = np.asarray(operands[0]), int(np.asarray(operands[1]))
    axis = _attribute(instruction, instruction.dimensions, "dimensions")[0]
    if size != x.shape[axis]:
        raise Unsupported("set-dimension-size below the static bound")
    return x
