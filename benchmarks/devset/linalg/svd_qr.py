"""lax.linalg.svd with algorithm=QR (gesvd): full and reduced, singular values alone."""
from _common import matrices, run_all
from jax import lax

QR = lax.linalg.SvdAlgorithm.QR


def f(a):
    return (lax.linalg.svd(a, full_matrices=True, algorithm=QR),
            lax.linalg.svd(a, full_matrices=False, algorithm=QR),
            lax.linalg.svd(a, compute_uv=False, algorithm=QR))


run_all(f, lambda t: (matrices((5, 3), t),), lambda t: (matrices((2, 3, 4), t, 1),))
