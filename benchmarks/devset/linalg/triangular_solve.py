"""lax.linalg.triangular_solve (trsm) with every side, triangle, transpose and diagonal."""
import numpy as np
from _common import matrices, run_all
from jax import lax


def f(a, b_left, b_right):
    out = []
    for left_side, b in ((True, b_left), (False, b_right)):
        for lower in (True, False):
            for transpose_a, conjugate_a in ((False, False), (True, False), (True, True)):
                for unit_diagonal in (False, True):
                    out.append(lax.linalg.triangular_solve(
                        a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                        conjugate_a=conjugate_a, unit_diagonal=unit_diagonal))
    return tuple(out)


def inputs(t, batch=()):
    a = matrices((*batch, 3, 3), t) + 3 * np.eye(3, dtype=t)
    return a, matrices((*batch, 3, 2), t, 1), matrices((*batch, 2, 3), t, 2)


run_all(f, inputs, lambda t: inputs(t, (2,)))
