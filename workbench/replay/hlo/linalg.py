"""`triangular-solve` and `cholesky`, as XLA's expanders define them.

XLA's CPU and GPU compilers replace both ops with HLO built by TriangularSolveExpander and
CholeskyExpander; those expansions are the semantics here:

- triangular-solve solves op(a) x = b (`left_side=true`) or x op(a) = b, op being the
  identity, `TRANSPOSE` or `ADJOINT`. Only the `lower` (or upper) triangle of a is read; with
  `unit_diagonal=true` the diagonal is not read and taken as ones. Leading dimensions are
  batch dimensions. Solved by substitution, row after row (XLA's direct solve; its blocked
  solve, used for large matrices, rounds differently).
- cholesky factors a = l l^H, reading only the lower triangle (or, for `lower=false`, the
  upper triangle through a transpose: u = cholesky(a^T)^T); the other triangle of the result
  is zero. Column j is (a - l l^H)[j:, j] / sqrt(real of its first element). A matrix that is
  not positive definite (a NaN square root on the diagonal) gives all NaNs for that batch
  element, as XLA's expansion returns it.

In text the printer omits the false flags (`left_side`, `lower`, `unit_diagonal`) and always
prints `transpose_a`; a triangular-solve without it did not come with its options.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.hlo_ir import HloModule, Instruction, Shape
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.dtypes import kind_of
from workbench.replay.hlo.registry import Value, handles

_TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


def _flag(instruction: Instruction, name: str) -> bool:
    value = instruction.attrs.get(name, "false").lower()
    if value not in ("true", "false"):
        raise EvaluationError(f"{instruction.name}: {name}={value}")
    return value == "true"


def _check_type(opcode: str, x: np.ndarray) -> None:
    if kind_of(x.dtype) not in ("float", "complex"):
        raise Unsupported(f"{opcode} on {x.dtype}")


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _triangle(a: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """The triangle of `a` that is read, zeros elsewhere (ones on a unit diagonal)."""
    n = a.shape[-1]
    keep = np.tri(n, n, -1 if unit_diagonal else 0, dtype=bool)
    if not lower:
        keep = keep.T
    out = np.where(keep, a, np.zeros((), a.dtype))
    if unit_diagonal:
        out = out + np.eye(n, dtype=a.dtype)
    return out


def substitute(t: np.ndarray, b: np.ndarray, forward: bool, unit_diagonal: bool) -> np.ndarray:
    """x with t x = b for a triangular t (forward: lower triangular; else upper), one row at
    a time, all batch elements and right-hand sides at once."""
    m = t.shape[-1]
    x = np.zeros(b.shape, b.dtype)
    order = range(m) if forward else range(m - 1, -1, -1)
    for i in order:
        done = slice(0, i) if forward else slice(i + 1, m)
        row = b[..., i, :]
        if (i > 0) if forward else (i < m - 1):
            row = row - np.matmul(t[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        if not unit_diagonal:
            row = row / t[..., i, i, None]
        x[..., i, :] = row
    return x


BLOCK_SIZE = 128  # TriangularSolveExpander's default, as XLA's CPU compiler uses it


def _invert_diagonal_blocks(blocks: np.ndarray, lower: bool) -> np.ndarray:
    """Inverses of triangular [k, s, s] blocks, as XLA computes them: scale the columns to a
    unit diagonal, invert one row at a time, unscale the rows. A zero on the diagonal turns
    its whole column into inf/NaN (0/0 above the diagonal), which the solve then spreads."""
    size = blocks.shape[-1]
    diagonal = np.diagonal(blocks, axis1=-2, axis2=-1)
    scaled = blocks / diagonal[:, None, :]
    start = np.eye(size, dtype=blocks.dtype) * -1
    first = 0 if lower else size - 1
    start[first, first] = 1
    inverse = np.repeat(start[None], blocks.shape[0], axis=0)
    for i in range(1, size):
        j = i if lower else size - 1 - i
        inverse[:, j, :] = -np.einsum("bk,bkm->bm", scaled[:, j, :], inverse)
    return inverse / diagonal[:, :, None]


def _diagonal_blocks(a: np.ndarray, size: int) -> np.ndarray:
    """[..., k, size, size] diagonal blocks of a; the last one padded with the identity."""
    n = a.shape[-1]
    count = -(-n // size)
    blocks = np.zeros((*a.shape[:-2], count, size, size), a.dtype)
    for index in range(count):
        low, high = index * size, min((index + 1) * size, n)
        blocks[..., index, :high - low, :high - low] = a[..., low:high, low:high]
        for pad in range(high - low, size):
            blocks[..., index, pad, pad] = 1
    return blocks


def _solve_blocked(a: np.ndarray, b: np.ndarray, left_side: bool, lower: bool,
                   transpose: bool, conjugate: bool) -> np.ndarray:
    """XLA's SolveByInvertingDiagonalBlocks on the masked `a`: invert the diagonal blocks,
    then one block row of x at a time by matrix products."""
    n = a.shape[-1]
    size = min(BLOCK_SIZE, n)
    blocks = _diagonal_blocks(a, size)
    inverses = _invert_diagonal_blocks(blocks.reshape(-1, size, size), lower)
    inverses = inverses.reshape(blocks.shape)
    if conjugate:
        inverses = np.conj(inverses)
        a = np.conj(a)
    count = blocks.shape[-3]
    backward = left_side ^ lower ^ transpose
    axis = -2 if left_side else -1

    def mat(x: np.ndarray) -> np.ndarray:
        return _swap(x) if transpose else x

    def solve_block(i: int, x: np.ndarray | None) -> np.ndarray:
        j = count - 1 - i if backward else i
        low, high = j * size, min((j + 1) * size, n)
        inverse = mat(inverses[..., j, :high - low, :high - low])
        remainder = b[..., low:high, :] if left_side else b[..., :, low:high]
        if x is not None:  # minus the part of the rows' products already solved
            done = slice(max(0, (count - i) * size), n) if backward else slice(0, i * size)
            part = mat(a[..., low:high, done] if (not left_side) == transpose
                       else a[..., done, low:high])
            remainder = remainder - (np.matmul(part, x) if left_side else np.matmul(x, part))
        return np.matmul(inverse, remainder) if left_side else np.matmul(remainder, inverse)

    x = solve_block(0, None)
    for i in range(1, count):
        update = solve_block(i, x)
        x = np.concatenate([update, x] if backward else [x, update], axis=axis)
    return x


def triangular_solve(a: np.ndarray, b: np.ndarray, left_side: bool, lower: bool,
                     transpose_a: str, unit_diagonal: bool) -> np.ndarray:
    """XLA's TriangularSolveExpander as the CPU compiler configures it: a 1x1 `a` divides;
    small matrices in a batch of more than 8 are solved by substitution, anything else by
    inverting 128x128 diagonal blocks (the two round differently, and differ in where a
    singular `a` gives inf or NaN)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.ndim != b.ndim:
        raise EvaluationError(f"triangular-solve of {list(a.shape)} and {list(b.shape)}")
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2 if left_side else -1]:
        raise EvaluationError(f"triangular-solve of {list(a.shape)} and {list(b.shape)}")
    if transpose_a not in _TRANSPOSES:
        raise Unsupported(f"triangular-solve transpose_a={transpose_a}")
    n = a.shape[-1]
    if b.size == 0:
        return b.copy()
    transpose = transpose_a != "NO_TRANSPOSE"
    conjugate = transpose_a == "ADJOINT"
    if n == 1:
        return b.copy() if unit_diagonal else b / (np.conj(a) if conjugate else a)
    t = _triangle(a, lower, unit_diagonal)
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))
    if not (batch > BLOCK_SIZE // 16 and n < BLOCK_SIZE // 4):
        return _solve_blocked(t, b, left_side, lower, transpose, conjugate)
    op_lower = lower
    if transpose:
        t = _swap(np.conj(t) if conjugate else t)
        op_lower = not op_lower
    if left_side:
        return substitute(t, b, op_lower, unit_diagonal)
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    return _swap(substitute(_swap(t), _swap(b), not op_lower, unit_diagonal))


@handles("triangular-solve")
def triangular_solve_op(interpreter: object, instruction: Instruction,
                        operands: list[Value]) -> Value:
    a, b = (np.asarray(x) for x in operands)
    _check_type("triangular-solve", a)
    transpose_a = instruction.attrs.get("transpose_a")
    if transpose_a is None:
        raise Unsupported("triangular-solve without its options")
    return triangular_solve(a, b, _flag(instruction, "left_side"), _flag(instruction, "lower"),
                            transpose_a.upper(), _flag(instruction, "unit_diagonal"))


def cholesky_lower(a: np.ndarray) -> np.ndarray:
    """XLA's lower Cholesky factor; NaN matrices where a diagonal square root is NaN."""
    n = a.shape[-1]
    complex_ = a.dtype.kind == "c"
    factor = np.zeros(a.shape, a.dtype)
    failed = np.zeros(a.shape[:-2], bool)
    for j in range(n):
        column = a[..., j:, j]
        if j:
            done = factor[..., j:, :j]
            column = column - np.matmul(done, np.conj(factor[..., j, :j])[..., None])[..., 0]
        pivot = np.sqrt(np.real(column[..., 0]))
        failed |= np.isnan(pivot)
        divisor = pivot.astype(a.dtype) if complex_ else pivot
        factor[..., j:, j] = column / divisor[..., None]
    return np.where(failed[..., None, None], np.array(np.nan, a.dtype), factor)


@handles("cholesky")
def cholesky(interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    a = np.asarray(operands[0])
    _check_type("cholesky", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise EvaluationError(f"cholesky of {list(a.shape)}")
    if _flag(instruction, "lower"):
        return cholesky_lower(a)
    return _swap(cholesky_lower(_swap(a))).copy()


# Ops whose results are accurate norm-wise, not element-wise: a factorization or solve is
# backward stable, so each element of its result may be off by about eps times its matrix's
# norm whatever its own magnitude (a small entry of a Schur form carries the rounding of the
# large ones beside it). LAPACK's custom-calls are such ops too (`lapack.TARGET`).
NORMWISE_OPCODES = frozenset(("cholesky", "triangular-solve"))


def is_normwise(instruction: Instruction) -> bool:
    """Whether `instruction`'s results are accurate only norm-wise (see `NORMWISE_OPCODES`)."""
    from workbench.replay.hlo.lapack import TARGET

    if instruction.opcode in NORMWISE_OPCODES:
        return True
    return (instruction.opcode == "custom-call"
            and TARGET.fullmatch(instruction.custom_call_target or "") is not None)


def normwise_outputs(module: HloModule) -> Any:
    """Per output of `module` (the structure of its result: a tuple per tuple), whether a
    norm-wise op (`is_normwise`) makes it, directly or through the computations it calls."""
    computations = module.by_name
    inside: dict[str, bool] = {}

    def calls_normwise(name: str) -> bool:
        if name not in inside:
            inside[name] = False  # a computation never calls itself; this ends any cycle
            computation = computations.get(name)
            inside[name] = computation is not None and any(
                is_normwise(i) or any(calls_normwise(c) for c in i.called_computations)
                for i in computation.instructions)
        return inside[name]

    entry = module.entry
    by_name = entry.by_name
    made: dict[str, bool] = {}

    def normwise(name: str) -> bool:
        """Whether a norm-wise op is among the instructions making `name` (iteratively:
        entry computations run to many thousands of instructions)."""
        stack = [name]
        while stack:
            current = stack[-1]
            if current in made:
                stack.pop()
                continue
            instruction = by_name[current]
            pending = [o for o in instruction.operands if o not in made and o in by_name]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            made[current] = (is_normwise(instruction)
                             or any(calls_normwise(c) for c in instruction.called_computations)
                             or any(made.get(o, False) for o in instruction.operands))
        return made[name]

    def like(shape: Shape, flag: bool) -> Any:
        return tuple(like(s, flag) for s in shape.tuple_shapes) if shape.is_tuple else flag

    root = entry.root
    if root.opcode == "tuple":
        return tuple(like(by_name[o].shape, normwise(o)) for o in root.operands)
    return like(root.shape, normwise(root.name))
