"""lax.linalg.hessenberg (gehrd): Householder vectors below the subdiagonal, and taus."""
from _common import matrices, run_all
from jax import lax

run_all(lax.linalg.hessenberg, lambda t: (matrices((4, 4), t),),
        lambda t: (matrices((2, 3, 3), t, 1),))
