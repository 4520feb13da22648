"""XLA GPU's cuDNN, cuBLAS and cuSOLVER custom-calls, each against an independent reference on
inputs the H100 corpus recorded (tests/data/xla_gpu: the conv training step's image and kernel,
the linear solve's matrix, a slice of the attention's q, k, v), and each shown to read its
backend_config (a changed option changes the result)."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

# scipy.linalg is imported inside the tests that compare with it: at module level every test
# collection would pay for it (about half a second).
from workbench.formats.hlo_text import parse_hlo_text
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module

DATA = Path(__file__).parents[2] / "data" / "xla_gpu"


def load(name: str) -> np.ndarray:
    return np.load(DATA / f"{name}.npy")


def linalg_input(k: int) -> np.ndarray:
    """The linear solve's recorded argument k (the matrix, the right-hand sides)."""
    return np.load(DATA / "linalg_solve" / "io" / "inputs" / f"f.arg{k}.npy")


def evaluate(body: str, *arguments: np.ndarray) -> object:
    module = parse_hlo_text(f"HloModule m\n\nENTRY e {{\n{body}\n}}\n")
    return evaluate_module(module, list(arguments))


def conv_config(scale: float = 1, activation: str = "kNone") -> str:
    return json.dumps({"cudnn_conv_backend_config": {
        "activation_mode": activation, "conv_result_scale": scale, "side_input_scale": 0}})


X = "f32[1,16,16,16]"
W = "f32[3,3,16,16]"
LABELS = "dim_labels=b01f_01io->b01f"


def conv_call(target: str, result: str, operands: tuple[str, str], window: str,
              config: str) -> str:
    a, b = operands
    return (f"  c = ({result}, u8[0]) custom-call({a}, {b}), window={{{window}}}, {LABELS}, "
            f"custom_call_target=\"{target}\", backend_config={config}\n"
            f"  ROOT r = {result} get-tuple-element(c), index=0")


def plain_conv(x: np.ndarray, w: np.ndarray, window: str, out: str) -> np.ndarray:
    return np.asarray(evaluate(
        f"  x = {X} parameter(0)\n  w = {W} parameter(1)\n"
        f"  ROOT r = {out} convolution(x, w), window={{{window}}}, {LABELS}", x, w))


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_conv_forward_is_the_evaluators_convolution_times_its_result_scale(scale: float) -> None:
    x, w = load("conv_x"), load("conv_w")
    window = "size=3x3 pad=1_1x1_1"
    got = evaluate(f"  x = {X} parameter(0)\n  w = {W} parameter(1)\n"
                   + conv_call("__cudnn$convForward", X, ("x", "w"), window, conv_config(scale)),
                   x, w)
    np.testing.assert_allclose(got, scale * plain_conv(x, w, window, X), rtol=1e-6, atol=1e-6)


def test_conv_bias_activation_applies_bias_and_relu() -> None:
    x, w = load("conv_x"), load("conv_w")
    bias = np.linspace(-1, 1, 16, dtype=np.float32)
    window = "size=3x3 pad=1_1x1_1"
    got = evaluate(
        f"  x = {X} parameter(0)\n  w = {W} parameter(1)\n  b = f32[16] parameter(2)\n"
        f"  c = ({X}, u8[0]) custom-call(x, w, b), window={{{window}}}, {LABELS}, "
        f"custom_call_target=\"__cudnn$convBiasActivationForward\", "
        f"backend_config={conv_config(1, 'kRelu')}\n  ROOT r = {X} get-tuple-element(c), index=0",
        x, w, bias)
    expected = np.maximum(plain_conv(x, w, window, X) + bias, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("window, out", [("size=3x3 pad=1_1x1_1", X),
                                         ("size=3x3 stride=2x2 pad=1_1x1_1", "f32[1,8,8,16]")])
def test_conv_backward_input_is_the_transpose_of_the_convolution(window: str, out: str) -> None:
    """<dy, conv(x, w)> = <backward_input(dy, w), x> for any x and dy."""
    x, w = load("conv_x"), load("conv_w")
    forward = plain_conv(x, w, window, out).astype(np.float64)
    rng = np.random.default_rng(0)
    for _ in range(3):
        dy = rng.standard_normal(forward.shape).astype(np.float32)
        dx = np.asarray(evaluate(f"  dy = {out} parameter(0)\n  w = {W} parameter(1)\n"
                                 + conv_call("__cudnn$convBackwardInput", X, ("dy", "w"),
                                             window, conv_config()), dy, w))
        assert dx.shape == x.shape
        lhs = float(np.sum(dy * forward))
        rhs = float(np.sum(dx.astype(np.float64) * x))
        assert abs(lhs - rhs) <= 1e-4 * np.sum(np.abs(dy * forward)), (lhs, rhs)


@pytest.mark.parametrize("window, out", [("size=3x3 pad=1_1x1_1", X),
                                         ("size=3x3 stride=2x2 pad=1_1x1_1", "f32[1,8,8,16]")])
def test_conv_backward_filter_is_the_kernel_gradient(window: str, out: str) -> None:
    """<dy, conv(x, v)> = <backward_filter(x, dy), v> for any kernel v."""
    x, w = load("conv_x"), load("conv_w")
    rng = np.random.default_rng(1)
    dy = rng.standard_normal(plain_conv(x, w, window, out).shape).astype(np.float32)
    dw = np.asarray(evaluate(f"  x = {X} parameter(0)\n  dy = {out} parameter(1)\n"
                             + conv_call("__cudnn$convBackwardFilter", W, ("x", "dy"), window,
                                         conv_config(2.0)), x, dy))
    for _ in range(3):
        v = rng.standard_normal(w.shape).astype(np.float32)
        lhs = 2.0 * float(np.sum(dy * plain_conv(x, v, window, out).astype(np.float64)))
        rhs = float(np.sum(dw.astype(np.float64) * v))
        assert abs(lhs - rhs) <= 1e-4 * max(1.0, abs(lhs)), (lhs, rhs)


BF16 = ml_dtypes.bfloat16
QKV = "bf16[1,32,4,64]"


def fmha(scale: float, mask: str, dropout: float = 0.0,
         bias: np.ndarray | None = None) -> np.ndarray:
    config = json.dumps({"cudnn_fmha_backend_config": {
        "bmm1_dot_dimension_numbers": {
            "lhs_batch_dimensions": ["0", "2"], "lhs_contracting_dimensions": ["3"],
            "rhs_batch_dimensions": ["0", "2"], "rhs_contracting_dimensions": ["3"]},
        "bmm2_dot_dimension_numbers": {
            "lhs_batch_dimensions": ["0", "1"], "lhs_contracting_dimensions": ["3"],
            "rhs_batch_dimensions": ["0", "2"], "rhs_contracting_dimensions": ["1"]},
        "dropout_rate": dropout, "fmha_scale": scale, "mask_type": mask}})
    q, k, v = (load(f"attention_{n}").view(BF16) for n in "qkv")
    if bias is None:
        return np.asarray(evaluate(
            f"  q = {QKV} parameter(0)\n  k = {QKV} parameter(1)\n  v = {QKV} parameter(2)\n"
            f"  c = (bf16[1,4,32,64], u8[0]) custom-call(q, k, v), "
            f"custom_call_target=\"__cudnn$fmhaSoftmax\", backend_config={config}\n"
            f"  ROOT r = bf16[1,4,32,64] get-tuple-element(c), index=0", q, k, v))
    return np.asarray(evaluate(
        f"  q = {QKV} parameter(0)\n  k = {QKV} parameter(1)\n  v = {QKV} parameter(2)\n"
        f"  b = bf16[1,4,32,32] parameter(3)\n"
        f"  c = (bf16[1,4,32,64], u8[0]) custom-call(q, k, v, b), "
        f"custom_call_target=\"__cudnn$fmhaScaleBiasSoftmax\", backend_config={config}\n"
        f"  ROOT r = bf16[1,4,32,64] get-tuple-element(c), index=0", q, k, v, bias))


def attention_written_out(scale: float, causal: bool,
                          bias: np.ndarray | None = None) -> np.ndarray:
    q, k, v = (load(f"attention_{n}").view(BF16).astype(np.float64) for n in "qkv")
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if bias is not None:
        scores = scores + bias.astype(np.float64)
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bhqd", p, v)


@pytest.mark.parametrize("scale, mask", [(0.125, "CAUSAL"), (0.5, "CAUSAL"), (0.125, "NO_MASK")])
def test_fmha_softmax_is_softmax_attention(scale: float, mask: str) -> None:
    got = fmha(scale, mask).astype(np.float64)
    expected = attention_written_out(scale, mask == "CAUSAL")
    # bf16 result and bf16 probabilities: a few bf16 ulps of the largest value
    assert np.max(np.abs(got - expected)) <= 4 * 2**-8 * np.max(np.abs(expected))
    other = attention_written_out(scale * 2, mask == "CAUSAL")
    assert np.max(np.abs(got - other)) > 4 * 2**-8 * np.max(np.abs(expected))


@pytest.mark.parametrize("mask", ["NO_MASK", "CAUSAL"])
def test_fmha_scale_bias_softmax_adds_its_bias_to_the_scores(mask: str) -> None:
    """`__cudnn$fmhaScaleBiasSoftmax`: softmax(scale * Q K^T + bias) V, the bias read from its
    fourth operand (one value per head, query and key)."""
    rng = np.random.default_rng(7)
    bias = rng.normal(0, 2, (1, 4, 32, 32)).astype(BF16)
    got = fmha(0.125, mask, bias=bias).astype(np.float64)
    expected = attention_written_out(0.125, mask == "CAUSAL", bias)
    assert np.max(np.abs(got - expected)) <= 4 * 2**-8 * np.max(np.abs(expected))
    unbiased = attention_written_out(0.125, mask == "CAUSAL")
    assert np.max(np.abs(got - unbiased)) > 4 * 2**-8 * np.max(np.abs(expected))


def test_fmha_with_dropout_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="fmhaSoftmax with dropout"):
        fmha(0.125, "CAUSAL", dropout=0.1)


def test_unknown_gpu_target_is_unsupported_by_name() -> None:
    with pytest.raises(Unsupported, match=r"custom-call __cudnn\$fmhaSoftmaxF8"):
        evaluate("  a = f32[2] parameter(0)\n  ROOT c = f32[2] custom-call(a), "
                 "custom_call_target=\"__cudnn$fmhaSoftmaxF8\"", np.ones(2, np.float32))


def linalg_call(target: str, result: str, config: str, *arguments: np.ndarray) -> object:
    parameters = "".join(f"  p{i} = f32[{','.join(map(str, a.shape))}] parameter({i})\n"
                         for i, a in enumerate(arguments))
    names = ", ".join(f"p{i}" for i in range(len(arguments)))
    return evaluate(f"{parameters}  ROOT c = {result} custom-call({names}), "
                    f"custom_call_target=\"{target}\", backend_config={config}", *arguments)


def spd() -> np.ndarray:
    a = linalg_input(0).astype(np.float64)
    return (a @ a.T / 64 + np.eye(64)).astype(np.float32)


@pytest.mark.parametrize("transpose", ["NO_TRANSPOSE", "TRANSPOSE"])
@pytest.mark.parametrize("lower", [True, False])
def test_cublas_triangular_solve_matches_scipy(transpose: str, lower: bool) -> None:
    import scipy.linalg

    a, b = spd(), linalg_input(1)
    config = json.dumps({"left_side": True, "lower": lower, "transpose_a": transpose,
                         "unit_diagonal": False})
    x, workspace = linalg_call("__cublas$triangularSolve", "(f32[64,8], s8[0])", config, a, b)
    expected = scipy.linalg.solve_triangular(a.astype(np.float64), b, lower=lower,
                                             trans=0 if transpose == "NO_TRANSPOSE" else 1)
    np.testing.assert_allclose(x, expected, rtol=1e-4, atol=1e-4)
    assert workspace.shape == (0,)


@pytest.mark.parametrize("lower", [True, False])
def test_cusolver_potrf_matches_scipy_cholesky(lower: bool) -> None:
    import scipy.linalg

    a = spd()
    factor, info = linalg_call("cusolver_potrf_ffi", "(f32[64,64], s32[])",
                               f"{{lower = {str(lower).lower()}}}", a)
    triangle = np.tril(factor) if lower else np.triu(factor)
    expected = scipy.linalg.cholesky(a.astype(np.float64), lower=lower)
    np.testing.assert_allclose(triangle, expected, rtol=1e-4, atol=1e-4)
    assert int(info) == 0


def test_cusolver_getrf_and_pivots_to_permutation_rebuild_the_matrix() -> None:
    import scipy.linalg

    a = linalg_input(0)
    lu, pivots, info = linalg_call("cusolver_getrf_ffi", "(f32[64,64], s32[64], s32[])", "{}", a)
    assert int(info) == 0 and pivots.min() >= 1
    permutation = evaluate("  p = s32[64] parameter(0)\n  ROOT c = s32[64] custom-call(p), "
                           "custom_call_target=\"cu_lu_pivots_to_permutation\", "
                           "backend_config={}", (pivots - 1).astype(np.int32))
    p = scipy.linalg.lu(a.astype(np.float64))[0]  # a = p @ lower @ upper
    rebuilt = (np.tril(lu, -1) + np.eye(64)) @ np.triu(lu)
    np.testing.assert_allclose(rebuilt, a[np.asarray(permutation)], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(permutation), np.argmax(p, axis=0))


@pytest.mark.parametrize("lower", [True, False])
def test_cusolver_syevd_matches_scipy_eigh_from_its_triangle(lower: bool) -> None:
    a = linalg_input(0)  # not symmetric: the triangle read decides the answer
    vectors, values, info = linalg_call("cusolver_syevd_ffi", "(f32[64,64], f32[64], s32[])",
                                        f"{{algorithm = 0 : ui8, lower = {str(lower).lower()}}}",
                                        a)
    half = np.tril(a, -1) if lower else np.triu(a, 1)
    symmetric = (half + half.T + np.diag(np.diag(a))).astype(np.float64)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(symmetric), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(symmetric @ vectors, vectors * values, rtol=1e-3, atol=1e-3)
    assert int(info) == 0


def gemm(target: str, epilogue: str, alpha: float, *arguments: np.ndarray) -> np.ndarray:
    config = json.dumps({"gemm_backend_config": {
        "alpha_real": alpha, "alpha_imag": 0, "beta": 0, "epilogue": epilogue,
        "dot_dimension_numbers": {"lhs_contracting_dimensions": ["1"],
                                  "rhs_contracting_dimensions": ["0"],
                                  "lhs_batch_dimensions": [], "rhs_batch_dimensions": []}}})
    parameters = "".join(f"  p{i} = f32[{','.join(map(str, a.shape))}] parameter({i})\n"
                         for i, a in enumerate(arguments))
    names = ", ".join(f"p{i}" for i in range(len(arguments)))
    return np.asarray(evaluate(
        f"{parameters}  c = (f32[8,16], s8[0]) custom-call({names}), "
        f"custom_call_target=\"{target}\", backend_config={config}\n"
        "  ROOT r = f32[8,16] get-tuple-element(c), index=0", *arguments))


def matmul_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The TF32 matmul program's recorded x, w, b (a corner of them)."""
    folder = DATA / "matmul_tf32" / "io" / "inputs"
    return tuple(np.load(folder / f"f.arg{k}.npy") for k in range(3))  # type: ignore[return-value]  # three arrays, read as written


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_cublas_lt_matmul_bias_gelu_is_gelu_of_the_product_plus_bias(alpha: float) -> None:
    x, w, b = matmul_inputs()
    got = gemm("__cublas$lt$matmul", "BIAS_GELU", alpha, x, w, b)
    h = alpha * (x.astype(np.float64) @ w) + b
    expected = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_cublas_gemm_and_relu_epilogue() -> None:
    x, w, _ = matmul_inputs()
    product = x.astype(np.float64) @ w
    np.testing.assert_allclose(gemm("__cublas$gemm", "DEFAULT", 1.0, x, w), product,
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gemm("__cublas$lt$matmul", "RELU", 1.0, x, w),
                               np.maximum(product, 0), rtol=1e-4, atol=1e-4)
    with pytest.raises(Unsupported, match="epilogue GELU_AUX"):
        gemm("__cublas$lt$matmul", "GELU_AUX", 1.0, x, w)


def test_cusolver_geqrf_and_orgqr_give_qr() -> None:
    """The chain JAX's `qr` emits on a GPU: geqrf's Householder form, orgqr's Q; checked
    against the definition (Q orthonormal, Q R = a, R upper) and NumPy's R up to row signs."""
    a = linalg_input(0)[:, :48]
    qr, tau = linalg_call("cusolver_geqrf_ffi", "(f32[64,48], f32[48])", "{}", a)
    q = linalg_call("cusolver_orgqr_ffi", "f32[64,48]", "{}", np.asarray(qr), np.asarray(tau))
    q, r = np.asarray(q, np.float64), np.triu(np.asarray(qr, np.float64)[:48])
    np.testing.assert_allclose(q.T @ q, np.eye(48), atol=1e-5)
    np.testing.assert_allclose(q @ r, a, rtol=1e-4, atol=1e-4)
    expected = np.linalg.qr(a.astype(np.float64))[1]
    signs = np.sign(np.diag(r)) * np.sign(np.diag(expected))
    np.testing.assert_allclose(r * signs[:, None], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", ["cusolver_gesvd_ffi", "cusolver_gesvdj_ffi"])
@pytest.mark.parametrize("full", [True, False])
def test_cusolver_gesvd_matches_numpy_and_reads_full_matrices(target: str, full: bool) -> None:
    a = linalg_input(0)[:, :40]
    u_dims, vt_dims = ("64,64", "40,40") if full else ("64,40", "40,40")
    config = f"{{compute_uv = true, full_matrices = {str(full).lower()}}}"
    _, s, u, vt, info = linalg_call(target, f"(f32[64,40], f32[40], f32[{u_dims}], "
                                    f"f32[{vt_dims}], s32[])", config, a)
    assert int(info) == 0 and np.asarray(u).shape == (64, 64 if full else 40)
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.float64), compute_uv=False),
                               rtol=1e-4, atol=1e-4)
    u, vt = np.asarray(u, np.float64), np.asarray(vt, np.float64)
    np.testing.assert_allclose((u[:, :40] * s) @ vt, a, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-5)


def test_cusolver_gesvd_without_uv_reads_compute_uv() -> None:
    a = linalg_input(0)[:, :40]
    _, s, u, vt, info = linalg_call(
        "cusolver_gesvd_ffi", "(f32[64,40], f32[40], f32[64,64], f32[40,40], s32[])",
        "{compute_uv = false, full_matrices = true}", a)
    assert int(info) == 0 and not np.any(u) and not np.any(vt)
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.float64), compute_uv=False),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", ["cu_threefry2x32_ffi", "cu_threefry2x32"])
def test_cu_threefry_matches_jax_random(target: str) -> None:
    """threefry_jax.npy: `jax.extend.random.threefry_2x32(key, count)` from JAX 0.12 on the
    CPU (count's halves are x0 and x1, the result's halves y0 and y1)."""
    key, count, expected = load("threefry_key"), load("threefry_count"), load("threefry_jax")
    k0, k1 = (np.full(16, k, np.uint32) for k in key)
    y0, y1 = evaluate(
        "".join(f"  p{i} = u32[16] parameter({i})\n" for i in range(4))
        + "  ROOT c = (u32[16], u32[16]) custom-call(p0, p1, p2, p3), "
        + f'custom_call_target="{target}"',
        k0, k1, count[0], count[1])
    np.testing.assert_array_equal(np.stack([y0, y1]), expected)


def f8_gemm(result: str, scales: tuple[float, ...], alpha: float = 1.0) -> np.ndarray:
    """`__cublas$lt$matmul$f8` on 16x32 and 32x16 slices of the FP8 program's recorded
    operands (b transposed as XLA's rewriter does: both contract their dimension 1)."""
    a = load("fp8_a_bits").view(ml_dtypes.float8_e4m3fn)
    b = np.ascontiguousarray(load("fp8_b_bits").view(ml_dtypes.float8_e4m3fn).T)
    config = json.dumps({"gemm_backend_config": {
        "alpha_real": alpha, "alpha_imag": 0, "beta": 0, "epilogue": "DEFAULT",
        "dot_dimension_numbers": {"lhs_contracting_dimensions": ["1"],
                                  "rhs_contracting_dimensions": ["1"],
                                  "lhs_batch_dimensions": [], "rhs_batch_dimensions": []},
        "precision_config": {"operand_precision": ["DEFAULT", "DEFAULT"]}, "scale_mode": 1}})
    names = ", ".join(f"s{k}" for k in range(len(scales)))
    body = ("  a = f8e4m3fn[16,32] parameter(0)\n  b = f8e4m3fn[16,32] parameter(1)\n"
            + "".join(f"  s{k} = f32[] parameter({k + 2})\n" for k in range(len(scales)))
            + f"  c = ({result}[16,16], s8[0]) custom-call(a, b, {names}), "
            f'custom_call_target="__cublas$lt$matmul$f8", backend_config={config}\n'
            f"  ROOT r = {result}[16,16] get-tuple-element(c), index=0")
    return np.asarray(evaluate(body, a, b, *(np.float32(s) for s in scales)))


def dequantized_product() -> np.ndarray:
    a = load("fp8_a_bits").view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    b = load("fp8_b_bits").view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return a @ b


def test_cublas_lt_f8_matmul_applies_a_and_b_scales_and_alpha() -> None:
    expected = 0.5 * (0.25 * 3.0) * dequantized_product()
    got = f8_gemm("f32", (0.25, 3.0), alpha=0.5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(f8_gemm("f32", (0.25, 3.0), alpha=1.0), got)


def test_cublas_lt_f8_matmul_d_scale_and_saturation_into_f8() -> None:
    scaled = 0.5 * 2.0 * 40.0 * dequantized_product()  # a_scale, b_scale, d_scale
    largest = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)
    expected = np.clip(scaled, -largest, largest).astype(ml_dtypes.float8_e4m3fn)
    got = f8_gemm("f8e4m3fn", (0.5, 2.0, 40.0))
    np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))
    assert np.any(np.abs(got.astype(np.float32)) == largest)  # saturated, not inf or NaN
    # c_scale and d_scale: with beta 0 c_scale reads nothing, d_scale the same as alone
    both = f8_gemm("f8e4m3fn", (0.5, 2.0, 7.0, 40.0))
    np.testing.assert_array_equal(both.astype(np.float32), expected.astype(np.float32))


def fmha_backward_numbers() -> dict[str, object]:
    """The four backward products' dimension numbers as XLA writes them for [B,H,S,D]."""
    def numbers(lhs: str, rhs: str) -> dict[str, list[str]]:
        return {"lhs_contracting_dimensions": [lhs], "rhs_contracting_dimensions": [rhs],
                "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "1"]}
    return {"bmm1_grad_gemm1_dot_dimension_numbers": numbers("2", "2"),
            "bmm1_grad_gemm2_dot_dimension_numbers": numbers("3", "2"),
            "bmm2_grad_gemm1_dot_dimension_numbers": numbers("2", "2"),
            "bmm2_grad_gemm2_dot_dimension_numbers": numbers("3", "3")}


@pytest.mark.parametrize("mask", ["NO_MASK", "CAUSAL"])
def test_fmha_backward_is_jaxs_gradient_of_softmax_attention(mask: str) -> None:
    """fmha_backward.npz: q, k, v, dO ([1,2,8,4]) and `jax.vjp` of softmax attention written
    out (scale 0.5, causal or not) from JAX 0.12; the forward's training form gives the
    stats and O the backward call reads."""
    data = np.load(DATA / "fmha_backward.npz")
    suffix = "_causal" if mask == "CAUSAL" else ""
    forward = json.dumps({"cudnn_fmha_backend_config": {
        "fmha_scale": 0.5, "dropout_rate": 0, "mask_type": mask,
        "bmm1_dot_dimension_numbers": {
            "lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["3"],
            "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "1"]},
        "bmm2_dot_dimension_numbers": {
            "lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["2"],
            "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "1"]}}})
    backward = json.dumps({"cudnn_fmha_backend_config": {
        "fmha_scale": 0.5, "dropout_rate": 0, "mask_type": mask, **fmha_backward_numbers()}})
    t = "f32[1,2,8,4]"
    body = ("".join(f"  {n} = {t} parameter({i})\n" for i, n in enumerate("qkvd"))
            + f"  f = ({t}, f32[1,2,8], u8[0]) custom-call(q, k, v), "
            f'custom_call_target="__cudnn$fmhaSoftmax", backend_config={forward}\n'
            f"  o = {t} get-tuple-element(f), index=0\n"
            "  stats = f32[1,2,8] get-tuple-element(f), index=1\n"
            f"  b = ({t}, {t}, {t}, u8[0]) custom-call(q, k, v, stats, d, o), "
            f'custom_call_target="__cudnn$fmhaSoftmaxBackward", backend_config={backward}\n'
            f"  dq = {t} get-tuple-element(b), index=0\n  dk = {t} get-tuple-element(b), index=1\n"
            f"  dv = {t} get-tuple-element(b), index=2\n"
            f"  ROOT r = ({t}, {t}, {t}, {t}, f32[1,2,8]) tuple(o, dq, dk, dv, stats)")
    o, dq, dk, dv, stats = evaluate(body, data["q"], data["k"], data["v"], data["do"])
    for name, value in (("o", o), ("dq", dq), ("dk", dk), ("dv", dv)):
        np.testing.assert_allclose(value, data[name + suffix], rtol=1e-4, atol=1e-5)
    scores = 0.5 * np.einsum("bhqd,bhkd->bhqk", data["q"].astype(np.float64), data["k"])
    if mask == "CAUSAL":
        scores = np.where(np.tril(np.ones((8, 8), bool)), scores, -np.inf)
    np.testing.assert_allclose(stats, np.log(np.exp(scores).sum(-1)), rtol=1e-5)


def test_fmha_backward_reads_its_scale_and_refuses_dropout() -> None:
    data = np.load(DATA / "fmha_backward.npz")
    t = "f32[1,2,8,4]"

    def run(config: dict[str, object]) -> np.ndarray:
        text = json.dumps({"cudnn_fmha_backend_config": {**config, **fmha_backward_numbers()}})
        body = ("".join(f"  {n} = {t} parameter({i})\n" for i, n in enumerate("qkvdo"))
                + "  s = f32[1,2,8] parameter(5)\n"
                f"  b = ({t}, {t}, {t}, u8[0]) custom-call(q, k, v, s, d, o), "
                f'custom_call_target="__cudnn$fmhaSoftmaxBackward", backend_config={text}\n'
                f"  ROOT dq = {t} get-tuple-element(b), index=0")
        return np.asarray(evaluate(body, data["q"], data["k"], data["v"], data["do"],
                                   data["o"], np.zeros((1, 2, 8), np.float32)))

    np.testing.assert_allclose(run({"fmha_scale": 0.5}), data["dq"], rtol=1e-4, atol=1e-5)
    assert not np.allclose(run({"fmha_scale": 1.0}), data["dq"], rtol=1e-2)
    with pytest.raises(Unsupported, match="dropout"):
        run({"fmha_scale": 0.5, "dropout_rate": 0.1})


FMHA_MASKS = DATA / "fmha_masks"
# Each case's mask, and the same module with it taken away
UNMASKED = {"padding": ('"mask_type": "PADDING"', '"mask_type": "NO_MASK"'),
            "padding_causal": ('"mask_type": "PADDING_CAUSAL"', '"mask_type": "CAUSAL"'),
            "window": ('"sliding_window_length": 4', '"sliding_window_length": 0'),
            "bias": ('"mask_type": "CAUSAL"', '"mask_type": "NO_MASK"')}
PARAMETERS = {"q": "q", "k": "k", "v": "v", "lengths_0_": "q_lengths",
              "lengths_1_": "kv_lengths", "d": "d", "bias": "bias"}


def masked_attention(case: str, text: str) -> tuple[np.ndarray, ...]:
    """The module evaluated on the case's arguments, each parameter by its name."""
    module = parse_hlo_text(text)
    data = np.load(FMHA_MASKS / f"{case}.npz")
    parameters = sorted(module.entry.parameters, key=lambda p: p.parameter_number)
    got = evaluate_module(module, [data[PARAMETERS[p.name.split(".")[0]]] for p in parameters])
    assert isinstance(got, tuple)
    return tuple(np.asarray(x, np.float64) for x in got)


@pytest.mark.parametrize("case", sorted(UNMASKED))
def test_fmha_masks_are_jaxs_attention_masks(case: str) -> None:
    """fmha_masks/<case>.txt: the module JAX 0.12 hands XLA for a GPU, cuDNN attention and its
    gradient with sequence lengths (PADDING, PADDING_CAUSAL), a causal sliding window, or a
    batch-shared bias (the backward call then also gives dbias); <case>.npz: its f16
    arguments and JAX's XLA attention of them in f32 (`make.py`)."""
    text = (FMHA_MASKS / f"{case}.txt").read_text()
    data = np.load(FMHA_MASKS / f"{case}.npz")
    got = masked_attention(case, text)
    for name, value in zip(("out", "dq", "dk", "dv", "dbias"), got, strict=True):
        expected = data[name].astype(np.float64)
        # f16 results and f16 probabilities: a few f16 ulps of the largest value
        assert np.abs(value - expected).max() <= 8 * 2**-11 * np.abs(expected).max(), name
    assert np.abs(got[4]).max() > 0.1 if case == "bias" else not got[4].any()
    if case.startswith("padding"):  # the first batch's queries after its length 5: zero
        assert not got[0][0, 5:].any() and not got[1][0, 5:].any()
    mask, none = UNMASKED[case]
    assert mask in text
    unmasked = masked_attention(case, text.replace(mask, none))
    assert np.abs(unmasked[0] - data["out"]).max() > 0.05  # the mask is read


def cub_order(x: float) -> tuple[int, float]:
    """CUB's radix-sort order of a float, written out: a NaN with its sign bit set before
    everything, one without after everything, -0.0 and +0.0 equal."""
    if np.isnan(x):
        return (-1, 0.0) if np.signbit(x) else (1, 0.0)
    return (0, x + 0.0)


@pytest.mark.parametrize("descending", [False, True])
def test_cub_radix_sort_is_a_stable_sort_along_the_last_dimension(descending: bool) -> None:
    """`__cub$DeviceRadixSort` of keys with ties, both zeros and NaNs of both signs, and
    their positions as values, against Python's stable sort row by row."""
    keys = np.array([[3.0, -0.0, 1.0, np.nan, 0.0, 1.0, -np.inf, 2.0],
                     [-np.nan, 5.0, 5.0, -1.0, np.inf, 0.0, -0.0, 5.0]], np.float32)
    positions = np.tile(np.arange(8, dtype=np.int32), (2, 1))
    config = json.dumps({"descending": descending})
    got_keys, got_positions = evaluate(
        "  k = f32[2,8] parameter(0)\n  v = s32[2,8] parameter(1)\n"
        "  c = (f32[2,8], s32[2,8], u8[64]) custom-call(k, v), "
        f'custom_call_target="__cub$DeviceRadixSort", backend_config={config}\n'
        "  a = f32[2,8] get-tuple-element(c), index=0\n"
        "  b = s32[2,8] get-tuple-element(c), index=1\n"
        "  ROOT r = (f32[2,8], s32[2,8]) tuple(a, b)", keys, positions)
    for row in range(2):
        expected = sorted(range(8), key=lambda i: cub_order(float(keys[row, i])),
                          reverse=descending)
        np.testing.assert_array_equal(got_positions[row], expected)
        np.testing.assert_array_equal(got_keys[row], keys[row, expected])
