"""lax.linalg.ormqr (ormqr / unmqr): Q of a geqrf times c, from the left and the right,
transposed or not."""
from _common import matrices, run_all
from jax import lax
from jax._src.lax.linalg import geqrf  # not exported by jax.lax.linalg


def f(a, c_left, c_right):
    h, taus = geqrf(a)
    return tuple(lax.linalg.ormqr(h, taus, c, left=left, transpose=transpose)
                 for left, c in ((True, c_left), (False, c_right))
                 for transpose in (False, True))


run_all(f, lambda t: (matrices((4, 3), t), matrices((4, 2), t, 1), matrices((2, 4), t, 2)),
        lambda t: (matrices((2, 3, 3), t, 3), matrices((2, 3, 2), t, 4),
                   matrices((2, 2, 3), t, 5)))
