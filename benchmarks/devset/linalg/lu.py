"""lax.linalg.lu of square, wide and tall matrices: getrf's LU, pivots and permutation."""
from _common import matrices, run_all
from jax import lax

run_all(lax.linalg.lu, lambda t: (matrices((4, 4), t),), lambda t: (matrices((2, 3, 5), t, 1),),
        lambda t: (matrices((5, 3), t, 2),))
