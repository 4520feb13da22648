"""A recorded factorization that is legal but not the reference's, judged by its relations.

Some factorizations are not unique. LAPACK's Schur form without sorting (`gees`) is unique
only up to the order of the eigenvalues on its diagonal and the phases of its Schur vectors;
an eigen-decomposition's (`geev`) vectors only up to order and phase; singular vectors
(`gesdd`, `gesvd`) up to phase, and a basis for a cluster of singular values. Another build of
LAPACK, or the same one on more threads, may legally return another one (JAX's `linalg_test`
on XLA CPU: the same eigenvalues of a clustered matrix in another order), and element by
element that is far from the reference, although it is right.

So where an output of the module is, directly, such a factorization's output (through
tuple/get-tuple-element/call/copy/reshape/transpose, and JAX's mask `select(info == 0, x,
NaN)`), and its matrix is an input of the execution, the recorded outputs are judged by what
makes them a factorization of that matrix, with LAPACK's own tests' rule: a residual is
legal up to `THRESHOLD` times n eps |A| (eps of the factorization's type, norms Frobenius):

- Schur: |A - Z T Z^H| (or, without Z, | |T| - |A| |), |Z^H Z - I| / (n eps), T upper
  triangular (real: quasi-triangular, 2x2 blocks apart), its eigenvalues (the diagonal, the
  2x2 blocks') equal to the reference's as a multiset;
- eig: the eigenvalues as a multiset, |A V - V diag(w)| / |V| and |V_l^H A - diag(w) V_l^H|
  / |V_l|, each vector of norm 1;
- SVD (`gesdd`, `gesvd`): |A - U S V^H|, U and V with orthonormal columns; the singular
  values, sorted, stay compared element by element.

Eigenvalues of a cluster are ill-conditioned: each is legal within LAPACK's error bound of an
eigenvalue, the same residual over its condition (`_eigenvalue_check`), and (for matrices of
at most `BACKWARD_ERROR_SIZE`) is an eigenvalue of a matrix that near A
(`_backward_error_check`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.hlo_ir import Computation, HloModule, Instruction, LiteralValue

THRESHOLD = 30.0  # LAPACK's test suites' threshold on a residual / (n eps |A|)

# Per routine and kind (real/complex), what each output of the custom-call is.
_OUTPUTS = {
    ("gees", False): ("t", "z", "wr", "wi"),
    ("gees", True): ("t", "z", "values"),
    ("geev", False): ("wr", "wi", "vl", "vr"),
    ("geev", True): ("values", "vl", "vr"),
    **{(svd, complex_): ("a", "s", "u", "vt") for svd in ("gesdd", "gesvd")
       for complex_ in (False, True)},
}
_NAMES = {"gees": "Schur form", "geev": "eigen-decomposition",
          "gesdd": "singular value decomposition", "gesvd": "singular value decomposition"}

# A move of an array: ("transpose", permutation, dims before) or ("reshape", dims after,
# dims before).
Transform = tuple[str, tuple[int, ...], tuple[int, ...]]


@dataclass
class Factorization:
    """One non-unique factorization whose outputs are outputs of the module: which entry
    parameter its matrix is (and how it is moved there), and per output it has, the result
    path and how the custom-call's output was moved to it."""

    call: Instruction
    routine: str
    complex_: bool
    parameter: int
    to_operand: list[Transform]
    outputs: dict[str, tuple[tuple[int, ...], list[Transform]]] = field(default_factory=dict)


@dataclass
class Relations:
    """The verdict on the recorded outputs at `paths` judged by their relations."""

    legal: bool
    paths: list[tuple[int, ...]]
    text: str


def _apply(array: np.ndarray, transforms: list[Transform]) -> np.ndarray:
    for kind, argument, _ in transforms:
        array = np.transpose(array, argument) if kind == "transpose" else array.reshape(argument)
    return array


def _undo(array: np.ndarray, transforms: list[Transform]) -> np.ndarray:
    for kind, argument, before in reversed(transforms):
        array = (np.transpose(array, np.argsort(argument)) if kind == "transpose"
                 else array.reshape(before))
    return array


def _move(instruction: Instruction, operand: Instruction) -> list[Transform]:
    """The move `instruction` (a copy, reshape or transpose of `operand`) makes."""
    if instruction.opcode == "reshape":
        return [("reshape", instruction.shape.dims, operand.shape.dims)]
    if instruction.opcode == "transpose":
        return [("transpose", tuple(instruction.dimensions or ()), operand.shape.dims)]
    return []


class _Tracer:
    """Follows values through moves that keep them what they are (see the module doc)."""

    def __init__(self, module: HloModule) -> None:
        self.computations = module.by_name
        self.entry = module.entry

    def output(self, computation: Computation, name: str, stack: tuple[Instruction, ...],
               moves: list[Transform]) -> tuple[Instruction, str, list[Transform],
                                                tuple[Instruction, ...]] | None:
        """The factorization output `name` is (its call, what output, moves from it)."""
        instruction = computation.by_name[name]
        opcode, operands = instruction.opcode, instruction.operands
        if opcode in ("copy", "reshape", "transpose"):
            operand = computation.by_name[operands[0]]
            return self.output(computation, operand.name, stack,
                               [*_move(instruction, operand), *moves])
        if opcode == "select" and len(operands) == 3:
            if _is_nan(computation, operands[2]):
                return self.output(computation, operands[1], stack, moves)
            return None
        if opcode == "complex":  # jnp's real eigenvalues: complex(wr, wi)
            parts = [self.output(computation, o, stack, []) for o in operands]
            if (parts[0] is None or parts[1] is None or parts[0][0] is not parts[1][0]
                    or (parts[0][1], parts[1][1]) != ("wr", "wi") or parts[0][2] or parts[1][2]):
                return None
            return parts[0][0], "values", moves, parts[0][3]
        if opcode == "call" and instruction.called_computations:
            callee = self.computations[instruction.called_computations[0]]
            return self.output(callee, callee.root.name, (*stack, instruction), moves)
        if opcode != "get-tuple-element" or instruction.tuple_index is None:
            return None
        source = computation.by_name[operands[0]]
        index = instruction.tuple_index
        if source.opcode == "tuple":
            return self.output(computation, source.operands[index], stack, moves)
        if source.opcode == "call" and source.called_computations:
            callee = self.computations[source.called_computations[0]]
            root = callee.root
            if root.opcode != "tuple":
                return None
            return self.output(callee, root.operands[index], (*stack, source), moves)
        kind = routine_of(source)
        if kind is None:
            return None
        names = _OUTPUTS[kind]
        return (source, names[index], moves, stack) if index < len(names) else None

    def parameter(self, computation: Computation, name: str,
                  stack: tuple[Instruction, ...]) -> tuple[int, list[Transform]] | None:
        """The entry parameter `name` is, and the moves from it (None: computed)."""
        instruction = computation.by_name[name]
        if instruction.opcode == "parameter" and instruction.parameter_number is not None:
            if not stack:
                return instruction.parameter_number, []
            call = stack[-1]
            caller = self.computation_of(call)
            if caller is None:
                return None
            return self.parameter(caller, call.operands[instruction.parameter_number],
                                  stack[:-1])
        if instruction.opcode not in ("copy", "reshape", "transpose"):
            return None
        found = self.parameter(computation, instruction.operands[0], stack)
        if found is None:
            return None
        number, moves = found
        operand = computation.by_name[instruction.operands[0]]
        return number, [*moves, *_move(instruction, operand)]

    def computation_of(self, instruction: Instruction) -> Computation | None:
        """The computation that holds `instruction`."""
        for computation in self.computations.values():
            if computation.by_name.get(instruction.name) is instruction:
                return computation
        return None


def _is_nan(computation: Computation, name: str) -> bool:
    instruction = computation.by_name[name]
    while instruction.opcode == "broadcast":
        instruction = computation.by_name[instruction.operands[0]]
    if instruction.opcode != "constant" or instruction.literal is None:
        return False
    value = np.asarray(instruction.literal)
    return value.size == 1 and bool(np.isnan(value).all())


def routine_of(instruction: Instruction) -> tuple[str, bool] | None:
    """(the routine: "gees", "geev", "gesdd" or "gesvd"; complex?) for a LAPACK custom-call
    whose result is not unique, else None."""
    from workbench.replay.hlo.lapack import TARGET

    if instruction.opcode != "custom-call":
        return None
    match = TARGET.fullmatch(instruction.custom_call_target or "")
    if match is None or match.group(2) not in _NAMES:
        return None
    return match.group(2), match.group(1) in "cz"


def factorizations(module: HloModule) -> list[Factorization]:
    """The non-unique factorizations among the outputs of `module`'s result (a tuple's
    elements, or the result itself)."""
    tracer = _Tracer(module)
    entry = module.entry
    root = entry.root
    results = ([((index,), name) for index, name in enumerate(root.operands)]
               if root.opcode == "tuple" else [((), root.name)])
    found: dict[str, Factorization] = {}
    for path, name in results:
        traced = tracer.output(entry, name, (), [])
        if traced is None:
            continue
        call, output, moves, stack = traced
        kind = routine_of(call)
        assert kind is not None
        factorization = found.get(call.name)
        if factorization is None:
            callee = tracer.computation_of(call)
            operand = None if callee is None else tracer.parameter(callee, call.operands[0],
                                                                   stack)
            if operand is None:
                continue
            factorization = Factorization(call, kind[0], kind[1], operand[0], operand[1])
            found[call.name] = factorization
        factorization.outputs[output] = (path, moves)
    return list(found.values())


# ------------------------------------------------------------------------------ the relations


def _eigenvalues_of_schur(t: np.ndarray) -> np.ndarray:
    """The eigenvalues of a (quasi-)triangular matrix: its diagonal, its 2x2 blocks'."""
    n = t.shape[-1]
    values: list[complex] = []
    j = 0
    while j < n:
        if j + 1 < n and t[j + 1, j] != 0:
            values.extend(np.linalg.eigvals(t[j:j + 2, j:j + 2]))
            j += 2
        else:
            values.append(complex(t[j, j]))
            j += 1
    return np.array(values, np.complex128)


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices pairing the values of `a` with those of `b`, the sum of distances least."""
    from scipy.optimize import linear_sum_assignment

    rows, columns = linear_sum_assignment(np.abs(a[:, None] - b[None, :]))
    return rows, columns


def _multiset_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance between paired values (`_pairs`)."""
    rows, columns = _pairs(a, b)
    return float(np.abs(a[rows] - b[columns]).max(initial=0.0))


def _eigenvalue_check(a: np.ndarray, theirs: list[np.ndarray], ours: list[np.ndarray],
                      scale: np.ndarray) -> _Check:
    """The recorded eigenvalues against the reference's as multisets, each pair within
    LAPACK's error bound of an eigenvalue, `THRESHOLD` n eps |A| / s, s = |y^H x| (unit
    left and right vectors) of A's nearest eigenvalue: a cluster's are ill-conditioned."""
    from scipy.linalg import eig

    worst = _Check("eigenvalues (as a multiset) off the reference's", 0.0, 0.0)
    ratio = -1.0
    for matrix, recorded, reference, size in zip(a, theirs, ours, scale, strict=True):
        exact, left, right = eig(matrix, left=True, right=True)
        cosines = np.abs(np.sum(np.conj(left) * right, axis=0)) / (
            np.linalg.norm(left, axis=0) * np.linalg.norm(right, axis=0))
        nearest = np.abs(reference[:, None] - exact[None, :]).argmin(axis=1)
        limits = THRESHOLD * size / np.maximum(cosines[nearest], 1e-300)
        rows, columns = _pairs(recorded, reference)
        distances = np.abs(recorded[rows] - reference[columns])
        ratios = distances / limits[columns]
        at = int(ratios.argmax())
        if ratios[at] > ratio:
            ratio = float(ratios[at])
            worst = _Check(worst.name, float(distances[at]), float(limits[columns][at]))
    return worst


BACKWARD_ERROR_SIZE = 128  # the largest n whose eigenvalues' backward errors are checked


def _backward_error_check(a: np.ndarray, theirs: list[np.ndarray], limit: float
                          ) -> _Check | None:
    """Each recorded eigenvalue mu is an eigenvalue of a matrix within `limit` of A: the
    least singular value of A - mu I (its backward error) is at most `limit`. One SVD per
    eigenvalue, so only up to `BACKWARD_ERROR_SIZE` (None beyond)."""
    n = a.shape[-1]
    if n > BACKWARD_ERROR_SIZE:
        return None
    identity = np.eye(n)
    worst = 0.0
    for matrix, values in zip(a, theirs, strict=True):
        shifted = matrix[None] - values[:, None, None] * identity
        worst = max(worst, float(np.linalg.svd(shifted, compute_uv=False)[:, -1].max()))
    return _Check("eigenvalues' backward error", worst, limit)


@dataclass
class _Check:
    name: str
    value: float
    limit: float

    @property
    def ok(self) -> bool:
        return bool(self.value <= self.limit)

    def __str__(self) -> str:
        relation = "<=" if self.ok else ">"
        return f"{self.name} {self.value:.3g} {relation} {self.limit:.3g}"


def _output(factorization: Factorization, value: Any, key: str) -> np.ndarray | None:
    """The custom-call's output `key` as recorded in `value` (the module's result), moved
    back; None when it is not an output of the module."""
    if key not in factorization.outputs:
        return None
    path, moves = factorization.outputs[key]
    part: Any = value
    for i in path:
        part = part[i]
    return _undo(np.asarray(part), moves)


def _judge_svd(factorization: Factorization, arguments: list[LiteralValue],
               recorded: LiteralValue) -> Relations | None:
    """Singular vectors, unique only up to phase (and a basis within a cluster of singular
    values): |A - U S V^H| <= 30 max(m, n) eps |A|, |U^H U - I| and |V^H V - I| <= 30
    max(m, n) eps. The singular values, sorted and unique, stay compared element by
    element (the vectors are judged with the recorded ones)."""
    s, u, vt = (_output(factorization, recorded, key) for key in ("s", "u", "vt"))
    if s is None or u is None or vt is None:
        return None
    a = _apply(np.asarray(arguments[factorization.parameter]), factorization.to_operand)
    element = a.dtype
    eps = float(np.finfo(element).eps)
    m, n = a.shape[-2:]
    k = min(m, n)
    wide = np.complex128 if factorization.complex_ else np.float64
    a = a.astype(wide).reshape(-1, m, n)
    u = u.astype(wide).reshape(-1, m, u.shape[-1])[..., :k]
    vt = vt.astype(wide).reshape(-1, vt.shape[-2], n)[..., :k, :]
    s = s.astype(np.float64).reshape(-1, k)
    size = max(m, n)
    limit = THRESHOLD * size * eps * float(np.linalg.norm(a, axis=(-2, -1)).max())

    def frobenius(x: np.ndarray) -> float:
        return float(np.linalg.norm(x, axis=(-2, -1)).max())

    identity = np.eye(k)
    checks = [
        _Check("|A - U S V^H|", frobenius(a - (u * s[:, None, :]) @ vt), limit),
        _Check("|U^H U - I|", frobenius(np.conj(np.swapaxes(u, -1, -2)) @ u - identity),
               THRESHOLD * size * eps),
        _Check("|V^H V - I|", frobenius(vt @ np.conj(np.swapaxes(vt, -1, -2)) - identity),
               THRESHOLD * size * eps)]
    legal = all(check.ok for check in checks)
    paths = [factorization.outputs[key][0] for key in ("u", "vt")]
    where = ", ".join("".join(f"{{{i}}}" for i in p) for p in paths)
    name = _NAMES[factorization.routine]
    verdict = (f"a different, legal {name}: A = U S V^H within" if legal
               else f"not a legal {name} either:")
    return Relations(legal, paths, f"{where} judged by the {name}'s relations "
                                   f"({factorization.call.name}, {element} {m}x{n}), "
                                   f"{verdict} " + ", ".join(str(c) for c in checks))


def judge_relations(factorization: Factorization, arguments: list[LiteralValue],
                    reference: LiteralValue, recorded: LiteralValue) -> Relations | None:
    """The recorded outputs of `factorization` judged by its relations (None: too few of
    its outputs are outputs of the module to judge them this way)."""
    outputs = factorization.outputs
    if factorization.routine in ("gesdd", "gesvd"):
        return _judge_svd(factorization, arguments, recorded)

    def output(value: Any, key: str) -> np.ndarray | None:
        return _output(factorization, value, key)

    def values(value: Any) -> np.ndarray | None:
        if "values" in outputs:
            return output(value, "values")
        if "wr" in outputs and "wi" in outputs:
            wr, wi = output(value, "wr"), output(value, "wi")
            assert wr is not None and wi is not None
            return wr.astype(np.float64) + 1j * wi.astype(np.float64)
        return None

    routine = factorization.routine
    keys = ("t", "z", "wr", "wi", "values") if routine == "gees" else ("values", "vl", "vr")
    used = [k for k in keys if k in outputs]
    if routine == "gees" and "t" not in used:
        return None
    if routine == "geev" and values(recorded) is None:
        return None
    a = _apply(np.asarray(arguments[factorization.parameter]), factorization.to_operand)
    wide = np.complex128 if factorization.complex_ or routine == "geev" else np.float64
    element = a.dtype
    eps = float(np.finfo(element).eps)
    n = a.shape[-1]
    a = a.astype(wide).reshape(-1, n, n)

    def batch(array: np.ndarray | None, vector: bool = False) -> np.ndarray | None:
        if array is None:
            return None
        return array.astype(wide).reshape((-1, n) if vector else (-1, n, n))

    checks: list[_Check] = []
    norms = np.linalg.norm(a, axis=(-2, -1))
    scale = np.maximum(n * eps * norms, np.finfo(np.float64).tiny)
    limit = THRESHOLD * float(scale.max())
    if routine == "gees":
        t, z = batch(output(recorded, "t")), batch(output(recorded, "z"))
        reference_t = batch(output(reference, "t"))
        assert t is not None and reference_t is not None
        if z is not None:
            residual = a - z @ t @ np.conj(np.swapaxes(z, -1, -2))
            checks.append(_Check("|A - Z T Z^H|", float(np.linalg.norm(residual, axis=(-2, -1))
                                                          .max()), limit))
            gram = np.conj(np.swapaxes(z, -1, -2)) @ z - np.eye(n)
            checks.append(_Check("|Z^H Z - I|", float(np.linalg.norm(gram, axis=(-2, -1)).max()),
                                 THRESHOLD * n * eps))
        else:
            gap = np.abs(np.linalg.norm(t, axis=(-2, -1)) - norms)
            checks.append(_Check("| |T| - |A| |", float(gap.max()), limit))
        below = np.tril(t, -2 if not factorization.complex_ else -1)
        checks.append(_Check("|T below its (block) diagonal|",
                             float(np.abs(below).max(initial=0.0)), limit))
        if not factorization.complex_ and n > 2:
            sub = np.diagonal(t, -1, -2, -1)
            pairs = (sub[..., 1:] != 0) & (sub[..., :-1] != 0)
            checks.append(_Check("adjacent 2x2 blocks", float(pairs.sum()), 0.0))
        ours = [_eigenvalues_of_schur(m) for m in reference_t]
        theirs = [_eigenvalues_of_schur(m) for m in t]
        given = values(recorded)
        if given is not None:
            given = given.astype(np.complex128).reshape(-1, n)
            distance = max(_multiset_distance(g, e) for g, e in zip(given, theirs,
                                                                     strict=True))
            checks.append(_Check("eigenvalue outputs vs diagonal of T", distance, limit))
    else:
        w = values(recorded)
        reference_w = values(reference)
        assert w is not None and reference_w is not None
        w = w.astype(np.complex128).reshape(-1, n)
        ours = list(reference_w.astype(np.complex128).reshape(-1, n))
        theirs = list(w)
        for key, left in (("vr", False), ("vl", True)):
            v = batch(output(recorded, key))
            if v is None:
                continue
            vh = np.conj(np.swapaxes(v, -1, -2))
            residual = (vh @ a - w[:, :, None] * vh) if left else (a @ v - v * w[:, None, :])
            size = np.linalg.norm(v, axis=(-2, -1))
            ratio = np.linalg.norm(residual, axis=(-2, -1)) / np.maximum(size, 1e-300)
            name = "|V_l^H A - W V_l^H| / |V_l|" if left else "|A V - V W| / |V|"
            checks.append(_Check(name, float(ratio.max()), limit))
            lengths = np.abs(np.linalg.norm(v, axis=-2) - 1)
            checks.append(_Check(f"{'left' if left else 'right'} vectors' | |v| - 1 |",
                                 float(lengths.max()), THRESHOLD * n * eps))
    checks.append(_eigenvalue_check(a, theirs, ours, scale))
    backward = _backward_error_check(a, theirs, limit)
    if backward is not None:
        checks.append(backward)
    legal = all(check.ok for check in checks)
    paths = [outputs[k][0] for k in used]
    where = ", ".join("".join(f"{{{i}}}" for i in p) for p in paths)
    name = _NAMES[routine]
    judged = f"{where} judged by the {name}'s relations"
    relation = "A = Z T Z^H" if routine == "gees" else "A V = V W"
    if routine == "geev" and not {"vl", "vr"} & set(used):
        judged, name, relation = (f"{where} judged as A's eigenvalues",
                                  "order of the eigenvalues", "the same multiset")
    verdict = (f"a different, legal {name}: {relation} within" if legal
               else f"not a legal {name} either:")
    return Relations(legal, paths, f"{judged} ({factorization.call.name}, {element} {n}x{n}), "
                                   f"{verdict} " + ", ".join(str(c) for c in checks))
