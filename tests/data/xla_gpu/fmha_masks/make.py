"""Write the cuDNN attention modules JAX hands XLA for a GPU, with padding masks (sequence
lengths) and a sliding window, and what JAX's own XLA implementation computes for them.

    PYENV_VERSION=3.12.1 JAX_PLATFORMS=cpu python3.12 make.py   (JAX 0.12, no GPU needed)

Each case `<name>.txt` is `jax.jit(...).lower(lowering_platforms=("cuda",))` of
`jax.nn.dot_product_attention(..., implementation="cudnn")` and its `jax.grad` (f16 q, k, v
[2,16,2,8]); lowering for CUDA on a machine without cuDNN needs JAX's cuDNN version check
answered, which is all the stand-in below does. `<name>.npz` holds the arguments and
`jax.nn.dot_product_attention(..., implementation="xla")` in f32 on the same values: the
output and the gradients of sum(output * d) with respect to q, k, v (and the bias, where the
case has one).
"""

from pathlib import Path

import jax
import jax._src.cudnn.fused_attention_stablehlo as fused
import jax.numpy as jnp
import numpy as np


class _CudnnVersion:
    @staticmethod
    def cudnn_get_version() -> int:
        return 91000


fused.cuda_versions = _CudnnVersion
fused.check_compute_capability = lambda capability: True

B, T, N, H = 2, 16, 2, 8
CASES = {
    "padding": {"query_seq_lengths": [5, 16], "key_value_seq_lengths": [11, 3]},
    "padding_causal": {"query_seq_lengths": [5, 16], "key_value_seq_lengths": [11, 3],
                       "is_causal": True},
    "window": {"is_causal": True, "local_window_size": (3, 0)},
    # a bias shared by the batch ([1, N, T, S]): the backward call also gives its gradient
    "bias": {"bias": True, "is_causal": True},
}


def attention(implementation: str, options: dict):
    def run(q, k, v, lengths, d, bias):
        keywords = {key: value for key, value in options.items() if key != "bias"}
        if "query_seq_lengths" in keywords:
            keywords["query_seq_lengths"], keywords["key_value_seq_lengths"] = lengths

        def loss(q, k, v, bias):
            out = jax.nn.dot_product_attention(q, k, v, bias if options.get("bias") else None,
                                               implementation=implementation, **keywords)
            return (out.astype(jnp.float32) * d).sum(), out

        (_, out), grads = jax.value_and_grad(loss, argnums=(0, 1, 2, 3), has_aux=True)(
            q, k, v, bias)
        return (out, *grads)
    return run


def main() -> None:
    here = Path(__file__).resolve().parent
    rng = np.random.default_rng(21)
    for name, options in CASES.items():
        q, k, v = (rng.normal(0, 1, (B, T, N, H)).astype(np.float16) for _ in range(3))
        d = rng.normal(0, 1, (B, T, N, H)).astype(np.float32)
        bias = rng.normal(0, 1, (1, N, T, T)).astype(np.float16)
        lengths = np.array([options.get("query_seq_lengths", [T, T]),
                            options.get("key_value_seq_lengths", [T, T])], np.int32)
        lowered = jax.jit(attention("cudnn", options)).trace(
            q, k, v, (lengths[0], lengths[1]), d, bias).lower(lowering_platforms=("cuda",))
        (here / f"{name}.txt").write_text(lowered.as_text(dialect="hlo"))
        wide = [jnp.asarray(x, jnp.float32) for x in (q, k, v, bias)]
        out, dq, dk, dv, dbias = jax.jit(attention("xla", options))(
            *wide[:3], (lengths[0], lengths[1]), d, wide[3])
        np.savez(here / f"{name}.npz", q=q, k=k, v=v, q_lengths=lengths[0],
                 kv_lengths=lengths[1], d=d, bias=bias, out=out, dq=dq, dk=dk, dv=dv,
                 dbias=dbias)


if __name__ == "__main__":
    main()
