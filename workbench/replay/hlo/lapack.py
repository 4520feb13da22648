"""jaxlib's LAPACK custom-calls (`lapack_{s,d,c,z}<routine>_ffi`), through SciPy's LAPACK.

JAX lowers linear algebra on CPU to typed-FFI custom-calls whose kernels call LAPACK (and BLAS
`trsm`) through the LAPACK SciPy ships. Calling the same routine with the same arguments and
workspace sizes gives the same bits on the same build; so eigenvectors, singular vectors and
Householder vectors come out with the signs, phases and order real XLA recorded, although they
are unique only up to those. Results can still legitimately differ from a recording made with
another LAPACK build (another SciPy/OpenBLAS version, another CPU kernel, MKL): by rounding,
and for nearly repeated eigenvalues or singular values by a change of basis within the
eigenspace; and where a vector is unique only up to its sign or phase, a different rounding
may pick another one. (With `OPENBLAS_CORETYPE=Prescott` instead of the SkylakeX kernel, the
same SciPy returns other phases for complex Schur vectors, and the Schur form's off-diagonal
rotates with them.) Within one replay every step runs on the same LAPACK, so steps compare like
with like; a recorded result made elsewhere can differ this way. Judging those differences is
the verdict's job, not this module's.

Conventions, as jaxlib's FFI kernels define them:

- Operands and results are the logical arrays; `_linalg_ffi_lowering` gives every matrix a
  column-major layout (`operand_layout_constraints`, result layouts `{0,1}` / `{1,2,0}`), so
  the kernel sees exactly the logical matrix. Another layout is `unsupported`.
- Leading dimensions are batch dimensions; each matrix is solved on its own.
- Attributes are in `backend_config` as an MLIR dictionary: characters as their codes
  (`uplo = 76 : ui8` is 'L'), `low`/`high` as i32, `left`/`transpose` as bools.
- Pivots (`getrf`, `geqp3`) are LAPACK's 1-based int32; `info` is int32 per matrix.
- Outputs LAPACK does not write (U and Vt when `mode` is 'N', eigenvectors not asked for)
  are zeros; outputs of a failed `geev` (info != 0, or -4 for a non-finite input, which the
  kernel does not pass to LAPACK) are NaN. JAX masks both and never returns them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.hlo_ir import Instruction
from workbench.replay.errors import EvaluationError, Unsupported
from workbench.replay.hlo.dtypes import dtype_of
from workbench.replay.hlo.registry import Value, handles_custom_call

TARGET = re.compile(r"lapack_([sdcz])([a-z0-9]+)_ffi")
_ELEMENT_TYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}


def parse_backend_config(text: str | None) -> dict[str, int | bool]:
    """`{uplo = 76 : ui8, left = true}` -> {"uplo": 76, "left": True}."""
    attributes: dict[str, int | bool] = {}
    body = (text or "").strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    for item in filter(None, (part.strip() for part in body.split(","))):
        match = re.fullmatch(r"([\w.]+)\s*=\s*(true|false|-?\d+)(?:\s*:\s*\w+)?", item)
        if match is None:
            raise Unsupported(f"backend_config entry {item!r}")
        name, value = match.groups()
        attributes[name] = value == "true" if value in ("true", "false") else int(value)
    return attributes


@dataclass
class LapackCall:
    """One batch element's call: SciPy's routines for the element type, and the attributes."""

    prefix: str  # s, d, c or z
    dtype: np.dtype
    attributes: dict[str, int | bool]
    target: str

    def routine(self, name: str) -> Callable[..., Any]:
        from scipy.linalg import lapack
        return getattr(lapack, self.prefix + name)

    def char(self, name: str) -> str:
        try:
            return chr(int(self.attributes[name]))
        except KeyError:
            raise EvaluationError(f"{self.target}: backend_config has no {name}") from None

    @property
    def is_complex(self) -> bool:
        return self.dtype.kind == "c"


Dims = tuple[int, ...]  # an output's non-batch dimensions
Kernel = Callable[[LapackCall, list[np.ndarray], list[Dims]], list[Any]]
# routine -> (kernel, the number of non-batch dimensions of each operand)
KERNELS: dict[str, tuple[Kernel, tuple[int, ...]]] = {}


def kernel(*names: str, core_ranks: tuple[int, ...] = (2,)) -> Callable[[Kernel], Kernel]:
    """Register the decorated function for routines `names` (the custom-call targets
    `lapack_<s|d|c|z><name>_ffi`); it gets one batch element's operands (of `core_ranks`
    dimensions each) and returns its outputs in jaxlib's order."""

    def register(function: Kernel) -> Kernel:
        for name in names:
            KERNELS[name] = (function, core_ranks)
            handles_custom_call(*(f"lapack_{prefix}{name}_ffi" for prefix in _ELEMENT_TYPES))(
                _lapack_call)
        return function
    return register


def _lapack_call(_interpreter: object, instruction: Instruction, operands: list[Value]) -> Value:
    return evaluate(instruction, operands)


def _lwork(work: Any) -> int:
    """A workspace query's answer, truncated to an integer as jaxlib does."""
    return max(1, int(np.real(np.asarray(work).ravel()[0])))


def _fortran(a: np.ndarray) -> np.ndarray:
    """A Fortran-ordered copy LAPACK may overwrite in place (`overwrite_a`)."""
    return np.array(a, order="F", copy=True)


def _check(call: LapackCall, info: int) -> int:
    if info < 0:
        raise EvaluationError(f"{call.target}: LAPACK rejected argument {-info}")
    return info


@kernel("getrf")
def getrf(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    lu, pivots, info = call.routine("getrf")(operands[0])
    return [lu, pivots + 1, _check(call, info)]


_SIDES = {"L": 0, "R": 1}
_TRANSPOSES = {"N": 0, "T": 1, "C": 2}


@kernel("trsm", core_ranks=(2, 2))
def trsm(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    from scipy.linalg import blas
    a, b = operands
    solve = getattr(blas, call.prefix + "trsm")
    x = solve(1.0, a, b, side=_SIDES[call.char("side")], lower=int(call.char("uplo") == "L"),
              trans_a=_TRANSPOSES[call.char("trans_x")], diag=int(call.char("diag") == "U"))
    return [x]


@kernel("geqrf")
def geqrf(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a = operands[0]
    work, info = call.routine("geqrf_lwork")(*a.shape)
    qr, tau, _, info = call.routine("geqrf")(a, lwork=_lwork(work))
    _check(call, info)
    return [qr, tau]


@kernel("geqp3", core_ranks=(2, 1))
def geqp3(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a, pivots = operands
    if np.any(pivots != 0):
        raise Unsupported(f"custom-call {call.target} with preset pivots")
    geqp3_ = call.routine("geqp3")
    qr, pivots_out, tau, _, info = geqp3_(a, lwork=_lwork(geqp3_(a, lwork=-1)[3]))
    _check(call, info)
    return [qr, pivots_out, tau]


@kernel("orgqr", "ungqr", core_ranks=(2, 1))
def orgqr(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a, tau = operands
    orgqr_ = call.routine("ungqr" if call.is_complex else "orgqr")
    q, _, info = orgqr_(a, tau, lwork=_lwork(orgqr_(a, tau, lwork=-1)[1]))
    _check(call, info)
    return [q]


@kernel("ormqr", "unmqr", core_ranks=(2, 1, 2))
def ormqr(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a, tau, c = operands
    side = "L" if call.attributes.get("left") else "R"
    trans = ("C" if call.is_complex else "T") if call.attributes.get("transpose") else "N"
    reflectors = a[:, :tau.shape[-1]]  # LAPACK reads the first k columns only
    ormqr_ = call.routine("unmqr" if call.is_complex else "ormqr")
    work = ormqr_(side, trans, reflectors, tau, c, -1)[1]
    product, _, info = ormqr_(side, trans, reflectors, tau, c, _lwork(work))
    _check(call, info)
    return [product]


@kernel("potrf")
def potrf(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    factor, info = call.routine("potrf")(operands[0], lower=int(call.char("uplo") == "L"),
                                         clean=0)
    return [factor, _check(call, info)]


def _svd(call: LapackCall, a: np.ndarray, routine: str, shapes: list[Dims]) -> list[Any]:
    mode = call.char("mode")
    if mode not in ("A", "S", "N"):
        raise Unsupported(f"custom-call {call.target} with mode {mode}")
    options = {"compute_uv": int(mode != "N"), "full_matrices": int(mode == "A")}
    work, info = call.routine(routine + "_lwork")(*a.shape, **options)
    x = _fortran(a)
    u, s, vt, info = call.routine(routine)(x, lwork=_lwork(work), overwrite_a=1, **options)
    if mode == "N":  # LAPACK does not write U or Vt
        u, vt = (np.zeros(shape, call.dtype) for shape in shapes[2:4])
    return [x, s, u, vt, _check(call, info)]


@kernel("gesdd")
def gesdd(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    return _svd(call, operands[0], "gesdd", shapes)


@kernel("gesvd")
def gesvd(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    return _svd(call, operands[0], "gesvd", shapes)


@kernel("syevd", "heevd")
def syevd(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a = operands[0]
    n = a.shape[-1]
    vectors = call.char("mode") == "V"
    # jaxlib's fixed workspace sizes (no query), which also pick LAPACK's code path
    sizes = {"liwork": 3 + 5 * n if vectors else 1}
    if call.is_complex:
        sizes["lwork"] = 2 * n + n * n if vectors else n + 1
        sizes["lrwork"] = 1 + 5 * n + 2 * n * n if vectors else max(n, 1)
        routine = call.routine("heevd")
    else:
        sizes["lwork"] = 1 + 6 * n + 2 * n * n if vectors else 2 * n + 1
        routine = call.routine("syevd")
    w, v, info = routine(a, compute_v=int(vectors), lower=int(call.char("uplo") == "L"),
                         **sizes)
    return [v, w, _check(call, info)]


def _unpack_eigenvectors(imaginary: np.ndarray, packed: np.ndarray, dtype: np.dtype
                         ) -> np.ndarray:
    """geev's real packing: a complex pair j, j+1 (imaginary[j] > 0) is stored as the real
    and imaginary parts in columns j and j+1."""
    vectors = packed.astype(dtype)
    j = 0
    n = packed.shape[-1]
    while j < n:
        if imaginary[j] != 0 and j + 1 < n:
            # parts set apart, as jaxlib does: -im keeps the sign of a zero
            vectors[:, j].real = vectors[:, j + 1].real = packed[:, j]
            vectors[:, j].imag = packed[:, j + 1]
            vectors[:, j + 1].imag = -packed[:, j + 1]
            j += 2
        else:
            j += 1
    return vectors


@kernel("geev")
def geev(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a = operands[0]
    left, right = (int(call.char(name) == "V") for name in ("compute_left", "compute_right"))
    vector_dtype = np.result_type(call.dtype, np.complex64)
    value_count = 1 if call.is_complex else 2
    failed = [np.full(shapes[0], np.nan, call.dtype)] * value_count + [
        np.full(shapes[value_count], np.nan, vector_dtype)] * 2
    if not np.all(np.isfinite(a)):  # the kernel does not call LAPACK
        return [*failed, -4]
    work, info = call.routine("geev_lwork")(a.shape[-1], compute_vl=left, compute_vr=right)
    result = call.routine("geev")(a, compute_vl=left, compute_vr=right, lwork=_lwork(work))
    *values, vl, vr, info = result
    if _check(call, info):
        return [*values, *failed[value_count:], info]
    vectors = []
    for packed, computed in ((vl, left), (vr, right)):
        if not computed:  # LAPACK does not write them
            vectors.append(np.zeros(shapes[value_count], vector_dtype))
        elif call.is_complex:
            vectors.append(packed)
        else:
            vectors.append(_unpack_eigenvectors(values[1], packed, vector_dtype))
    return [*values, *vectors, info]


def _no_selection(*_: object) -> None:
    return None


@kernel("gees")
def gees(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a = operands[0]
    if call.char("sort") != "N":
        raise Unsupported(f"custom-call {call.target} with sorted eigenvalues")
    vectors = int(call.char("mode") == "V")
    gees_ = call.routine("gees")
    query = gees_(_no_selection, a, compute_v=vectors, sort_t=0, lwork=-1)
    result = gees_(_no_selection, a, compute_v=vectors, sort_t=0, lwork=_lwork(query[-2]))
    t, selected, *values, schur_vectors, _, info = result
    if not vectors:  # LAPACK does not write the Schur vectors
        schur_vectors = np.zeros(shapes[1], call.dtype)
    return [t, schur_vectors, *values, selected, _check(call, info)]


@kernel("gehrd")
def gehrd(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a = operands[0]
    low, high = (int(call.attributes[name]) - 1 for name in ("low", "high"))  # 1-based
    work, info = call.routine("gehrd_lwork")(a.shape[-1], lo=low, hi=high)
    h, tau, info = call.routine("gehrd")(a, lo=low, hi=high, lwork=_lwork(work))
    return [h, tau, _check(call, info)]


@kernel("sytrd", "hetrd")
def sytrd(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    a = operands[0]
    name = "hetrd" if call.is_complex else "sytrd"
    work, info = call.routine(name + "_lwork")(a.shape[-1], lower=1)  # jaxlib queries with 'L'
    c, d, e, tau, info = call.routine(name)(a, lower=int(call.char("uplo") == "L"),
                                            lwork=_lwork(work))
    return [c, d, e, tau, _check(call, info)]


@kernel("gtsv", core_ranks=(1, 1, 1, 2))
def gtsv(call: LapackCall, operands: list[np.ndarray], shapes: list[Dims]) -> list[Any]:
    """JAX's dl and du have n entries (dl[0] and du[n-1] unused); LAPACK's have n - 1."""
    dl, d, du, b = operands
    n = d.shape[-1]
    if n <= 1:  # SciPy's wrapper refuses n = 1; LAPACK divides by d or reports it zero
        if n == 1 and d[0] == 0:
            return [dl, d, du, b, 1]
        return [dl, d, du, b / d[:, None] if n else b, 0]
    fill, d_out, du_out, x, info = call.routine("gtsv")(dl[1:], d, du[:-1], b)
    return [np.concatenate([dl[:1], fill]), d_out, np.concatenate([du_out, du[-1:]]), x,
            _check(call, info)]


def _expected_layout(rank: int, matrix_rank: int) -> tuple[int, ...]:
    """jaxlib's layouts: arrays of the operands' largest rank are batches of column-major
    matrices (`{0,1}`, `{1,2,0}`); smaller ones (pivots, taus, info) are row-major."""
    if rank == matrix_rank and rank >= 2:
        return (rank - 2, rank - 1, *range(rank - 3, -1, -1))
    return tuple(range(rank - 1, -1, -1))


def _check_layouts(instruction: Instruction, target: str, operands: list[np.ndarray]) -> None:
    """Refuse what the kernel would read or write in another order than jaxlib lays it out
    (layouts the dump does not give are taken to be jaxlib's)."""
    matrix_rank = max(a.ndim for a in operands)
    constraints = instruction.attrs.get("operand_layout_constraints", "")
    for layout in re.findall(r"\[[\d,]*\]\{([\d,]*)\}", constraints):
        order = tuple(int(d) for d in layout.split(",") if d)
        if order != _expected_layout(len(order), matrix_rank):
            raise Unsupported(f"custom-call {target} with operand layout {{{layout}}}")
    shape = instruction.shape
    for result in shape.tuple_shapes if shape.is_tuple else (shape,):
        if (result.layout is not None and result.dims
                and tuple(result.layout) != _expected_layout(len(result.dims), matrix_rank)):
            raise Unsupported(f"custom-call {target} with result layout {result}")


def evaluate(instruction: Instruction, operands: list[Any]) -> Any:
    """The custom-call's result: one array, or a tuple when the instruction returns one."""
    target = instruction.custom_call_target or ""
    match = TARGET.fullmatch(target)
    if match is None or match.group(2) not in KERNELS:
        raise Unsupported(f"custom-call {target}")
    try:
        import scipy.linalg.lapack  # noqa: F401
    except ImportError:
        raise Unsupported(f"custom-call {target} (pip install scipy)") from None
    prefix, routine = match.groups()
    function, core_ranks = KERNELS[routine]
    call = LapackCall(prefix, np.dtype(_ELEMENT_TYPES[prefix]),
                      parse_backend_config(instruction.backend_config), target)
    arrays = [np.asarray(x) for x in operands]
    _check_layouts(instruction, target, arrays)
    if len(arrays) != len(core_ranks):
        raise EvaluationError(f"{instruction.name}: {target} takes {len(core_ranks)} operands")
    if any(a.dtype != call.dtype for a in arrays if a.dtype.kind in "fc"):
        raise EvaluationError(f"{instruction.name}: {target} of {arrays[0].dtype}")
    batch = arrays[0].shape[:arrays[0].ndim - core_ranks[0]]
    for array, rank in zip(arrays, core_ranks, strict=True):
        if array.ndim != len(batch) + rank or array.shape[:len(batch)] != batch:
            raise EvaluationError(
                f"{instruction.name}: {target} operands {[list(a.shape) for a in arrays]}")
    shape = instruction.shape
    result_shapes = list(shape.tuple_shapes) if shape.is_tuple else [shape]
    outputs = [np.zeros(s.dims, dtype_of(s.element_type)) for s in result_shapes]
    cores = [tuple(s.dims[len(batch):]) for s in result_shapes]
    for index in np.ndindex(*batch):
        element = [a[index] for a in arrays]
        values = function(call, element, cores)
        if len(values) != len(outputs):
            raise Unsupported(f"custom-call {target} with {len(outputs)} results")
        for output, value in zip(outputs, values, strict=True):
            value = np.asarray(value)
            if (value.shape != output.shape[len(batch):]
                    or not np.can_cast(value.dtype, output.dtype, "same_kind")):
                raise Unsupported(f"custom-call {target} returning {list(output.shape)}")
            output[index] = value
    return tuple(outputs) if shape.is_tuple else outputs[0]
