"""The verdict from a rounding error bound, on real low-precision XLA CPU dumps.

`tests/data/lowp/` holds one module each of four small JAX programs (`program.py` beside
them) whose f32 results went through bf16 or f16: an attention, a convolution with batch norm,
a cumulative sum, activations (exp, tanh, gelu, silu). Real XLA computed their recorded
results correctly, yet its legal precision changes (float normalization, excess precision,
algsimp rewrites, a reassociated scan) move them beyond the fixed f32 tolerance. The verdict
must call them ok, and still name a real bug planted after the precision change
(`planting.py`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_json
from tests.helpers.planting import plant
from workbench.hlo_ir import Computation, HloModule, Instruction, Shape
from workbench.index import scan
from workbench.replay.bisect import evaluation_bound
from workbench.replay.errors import Unsupported
from workbench.replay.hlo import evaluate_module
from workbench.replay.hlo.shadow import shadow_module
from workbench.replay.judge.compare import Truth, compare
from workbench.replay.judge.error_bound import perturb, truth_of, widen
from workbench.replay.judge.outcome import Kind
from workbench.replay.mlir.shadow import shadow_text
from workbench.replay.steps import open_replay

LOWP = Path(__file__).resolve().parents[1] / "data" / "lowp"
# folder, module, the pass today's fixed tolerance blamed
DUMPS = [("attention_bf16", "module_0002", "float-normalization-bf16"),
         ("conv_bn_f16", "module_0006", "algsimp"),
         ("cumsum_bf16", "module_0002", "reduce-window-rewriter"),
         ("activations_bf16_f32_out", "module_0000", "float-normalization-bf16")]




@pytest.mark.parametrize(("name", "module", "blamed"), DUMPS)
def test_no_false_mismatch_on_low_precision(name: str, module: str, blamed: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = LOWP / name
    status, payload = run_json(capsys, "bisect", folder, module, "--json", "--linear")
    assert status == 0 and payload["status"] == "ok", payload["detail"]
    assert all(r["status"] == "ok" for r in payload["results"])
    # The fixed tolerance alone would cry wolf: the recording is beyond it, within the bound.
    recorded = payload["recorded"]
    assert recorded["ok"] and recorded["judged_by"] == "error bound"
    assert recorded["bound"]["error"] <= recorded["bound"]["bound"]
    # The reference in f64 (and again on perturbed inputs if its own rounding is not enough).
    assert 1 <= payload["shadow_evaluations"] <= 2
    # ... and, judged by that tolerance (asked for explicitly), names the legal change.
    status, fixed = run_json(capsys, "bisect", folder, module, "--json",
                             "--atol", "1e-5", "--rtol", "1e-4")
    assert status == 1 and fixed["culprit"]["pass"] == blamed
    assert fixed["shadow_evaluations"] == 0


@pytest.mark.parametrize("from_step", [7, 12, 24])
def test_planted_bug_behind_a_precision_change_is_named(
        from_step: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """exp -> expm1 from a pass after float-normalization-bf16 (XLA step 0005) on."""
    planted = tmp_path / "attention"
    assert plant(LOWP / "attention_bf16", planted, "module_0002", from_step,
                 "exponential", "exponential-minus-one")
    status, payload = run_json(capsys, "bisect", planted, "module_0002", "--json")
    assert status == 1 and payload["status"] == "mismatch"
    assert payload["culprit"]["xla_step"] == from_step
    assert payload["evaluations"] <= evaluation_bound(payload["steps"])
    assert payload["shadow_evaluations"] == 2  # the bug is beyond both stages of the bound
    culprit = next(r for r in payload["results"] if r["index"] == payload["culprit"]["index"])
    comparison = culprit["comparison"]
    assert comparison["judged_by"] == "error bound"
    # Far beyond what rounding explains (11.8x before bf16 dots could accumulate in bf16,
    # 9.3x since: the legal noise of the attention dots widened the bound by 27%)
    assert comparison["bound"]["ratio"] > 5
    assert "beyond the rounding error bound" in comparison["summary"]
    # The recording is real XLA's correct result: it matches the reference.
    assert payload["recorded"]["ok"]


@pytest.mark.parametrize("from_step", [1, 14, 27])
def test_a_bug_small_beside_an_arrays_largest_values_is_named(
        from_step: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """exp -> expm1 in bf16 activations returned as f32 (exp of values up to 8, so up to
    about 3,000): the bug moves every exp by 1, within the rounding of the largest ones (a bf16
    ulp is 16 there) but far beyond that of the small ones. Judged with one absolute term for
    the whole array (its largest spread, several units) no step differed from the reference;
    each element's absolute term now comes from elements of its own magnitude or less."""
    planted = tmp_path / "activations"
    assert plant(LOWP / "activations_bf16_f32_out", planted, "module_0000", from_step,
                 "exponential", "exponential-minus-one")
    status, payload = run_json(capsys, "bisect", planted, "module_0000", "--json")
    assert status == 1 and payload["culprit"]["xla_step"] == from_step
    assert payload["evaluations"] <= evaluation_bound(payload["steps"])
    assert payload["recorded"]["ok"]


def test_the_absolute_term_comes_from_elements_of_the_same_magnitude_or_less() -> None:
    """An element of about 1 beside elements of 3,000 whose rounding moved them by 8: its
    bound stays near its own rounding. A cancellation near zero whose own rounding was small
    by luck takes its neighbours' (elements of about its magnitude, and the smallest of the
    array). A small array keeps its largest spread everywhere."""
    from workbench.replay.judge.error_bound import SMALLEST

    values = np.concatenate([np.full(200, 1.0), np.full(100, 3000.0), [1e-3, 1e-3]])
    strict = values.copy()
    strict[200:300] += 8.0  # the large elements' rounding
    strict[200 + 100] += 5e-3  # one cancellation rounded badly; the one after it by luck
    bound = truth_of(strict.astype(np.float32), values, values).bound
    assert bound[0] < 1e-2 and bound[250] >= 8.0
    assert bound[301] >= 5e-3  # a neighbour of its magnitude, and among the array's smallest
    small = np.concatenate([np.full(SMALLEST - 4, 1.0), np.full(4, 3000.0)])
    small_strict = small + np.where(small > 1, 8.0, 0.0)
    assert truth_of(small_strict.astype(np.float32), small, small).bound[0] >= 8.0


def test_triage_names_the_planted_step(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    planted = tmp_path / "attention"
    plant(LOWP / "attention_bf16", planted, "module_0002", 24, "exponential",
          "exponential-minus-one")
    status, payload = run_json(capsys, "triage", planted, "--json", "--jobs", "0")
    assert status == 1
    (result,) = payload["results"]
    assert result["status"] == "mismatch" and result["culprit"]["pass"] == "fusion"
    assert result["shadow_evaluations"] == 2


def test_mlir_cross_check_judges_by_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """`module.mlir` on the same snapshot, in the xDSL interpreter, with its own shadow."""
    status, payload = run_json(capsys, "bisect", LOWP / "attention_bf16", "module_0002",
                               "--backend", "mlir", "--json")
    assert status == 0 and payload["status"] == "ok", payload["detail"]
    assert payload["recorded"]["judged_by"] == "error bound"


def test_corpus_f32_needs_no_shadow(corpus: Path) -> None:
    """Lazy: steps within the fixed tolerance cost no higher-precision evaluation."""
    dump = scan(corpus / "xla" / "layernorm")
    module = dump.find_module("jit_ln")
    with open_replay(dump.root, module, module.executions[0]) as replay:
        results = replay.run()
    assert {r.kind for r in results} == {Kind.OK}
    assert replay.shadow_evaluations == 0
    assert replay.recorded_comparison is not None and replay.recorded_comparison.bound is None


# ------------------------------------------------------------------------------ the parts


def test_compare_with_a_truth_passes_within_the_bound_only() -> None:
    reference = np.array([1.0, 2.0, 3.0, 0.0], np.float32)
    truth = Truth(np.array([1.01, 2.0, 3.0, 0.0]), np.array([0.05, 1e-6, 1e-6, 0.0]))
    inside = np.array([1.04, 2.0, 3.0, 0.0], np.float32)
    beyond = np.array([1.04, 2.5, 3.0, np.nan], np.float32)
    assert not compare(reference, inside).ok  # beyond the f32 tolerance ...
    ok = compare(reference, inside, truth=truth)
    assert ok.ok and ok.bound is not None and ok.bound.index == (0,)
    assert ok.bound.error == pytest.approx(0.03, abs=1e-6)
    failed = compare(reference, beyond, truth=truth)
    assert not failed.ok and failed.mismatches == 2  # 2.5 and the NaN
    assert failed.first_index == (1,) and failed.bound is not None
    assert failed.bound.ratio == np.inf  # the NaN: no distance at all


def test_integers_stay_exact_with_a_truth() -> None:
    reference = np.array([1, 2], np.int32)
    truth = truth_of(reference, reference, reference)
    assert truth.bound is None
    assert not compare(reference, np.array([1, 3], np.int32), truth=truth).ok


def test_bound_grows_with_rounding_and_conditioning() -> None:
    strict = np.array([1.0, 100.0], np.float32)
    shadow = np.array([1.0, 100.0])
    perturbed = np.array([1.0, 100.5])  # the second element is ill-conditioned
    bound = truth_of(strict, shadow, perturbed).bound
    assert bound[1] >= 4 * 0.5 and bound[0] < bound[1]


def test_perturbation_is_deterministic_and_small() -> None:
    arguments = [np.linspace(1, 2, 16, dtype=np.float32), np.arange(4, dtype=np.int32)]
    first, second = perturb(arguments), perturb(arguments)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], arguments[1])  # integers are not perturbed
    relative = np.abs(first[0] / arguments[0] - 1)
    assert first[0].dtype == np.float64
    assert np.all((relative > 0) & (relative < 4 * np.finfo(np.float32).eps))


def test_perturbation_pattern_is_a_random_sign_per_element() -> None:
    """The pattern is the one `rng.choice([-1, 1])` draws element after element, argument
    after argument (tuples included): every verdict's bound depends on it, so a faster way of
    drawing it must give the same values (computed here, in the same run)."""
    import ml_dtypes

    arguments = [np.linspace(-3, 5, 35, dtype=np.float32).reshape(5, 7),
                 np.arange(4, dtype=np.int32),
                 (np.linspace(1, 2, 6, dtype=np.float16),
                  np.array([1 + 2j, -0.5j], np.complex64)),
                 np.linspace(0, 1, 9).astype(ml_dtypes.bfloat16)]
    rng = np.random.default_rng(20240917)

    def drawn(value: object) -> object:
        if isinstance(value, tuple):
            return tuple(drawn(part) for part in value)
        array = np.asarray(value)
        if array.dtype.kind not in "fcV" and array.dtype != ml_dtypes.bfloat16:
            return array
        signs = rng.choice(np.array([-1.0, 1.0]), size=array.shape)
        base = np.float32 if array.dtype.kind == "c" else array.dtype
        eps = float(ml_dtypes.finfo(base).eps)
        wide = array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)
        return wide * (1.0 + 2.0 * eps * signs)

    expected = [drawn(a) for a in arguments]
    got = perturb(arguments)
    flat = [got[0], got[1], *got[2], got[3]]
    for a, b in zip(flat, [expected[0], expected[1], *expected[2], expected[3]], strict=True):
        assert a.dtype == b.dtype
        assert a.tobytes() == b.tobytes()


def _module(instructions: list[Instruction]) -> HloModule:
    entry = Computation("main", instructions, instructions[-1].name, is_entry=True)
    return HloModule("m", [entry], "main")


def test_shadow_module_skips_the_rounding_of_narrow_types() -> None:
    f32, bf16 = Shape("f32", (1,)), Shape("bf16", (1,))
    module = _module([
        Instruction("x", "parameter", f32, parameter_number=0),
        Instruction("n", "convert", bf16, operands=["x"]),
        Instruction("w", "convert", f32, operands=["n"]),
        Instruction("y", "subtract", f32, operands=["w", "x"]),
    ])
    x = np.array([1 + 2 ** -10], np.float32)
    strict = evaluate_module(module, [x])
    shadow = evaluate_module(shadow_module(module), [widen(x)])
    assert strict[0] != 0 and shadow.dtype == np.float64 and shadow[0] == 0


def test_shadow_module_fences_bitcasts() -> None:
    u32, f32 = Shape("u32", (2,)), Shape("f32", (2,))
    module = _module([
        Instruction("bits", "parameter", u32, parameter_number=0),
        Instruction("f", "bitcast-convert", f32, operands=["bits"]),
        Instruction("g", "multiply", f32, operands=["f", "f"]),
        Instruction("back", "bitcast-convert", u32, operands=["g"]),
    ])
    bits = np.array([0x3F800000, 0x40000000], np.uint32)  # 1.0 and 2.0
    shadow = evaluate_module(shadow_module(module), [bits])
    np.testing.assert_array_equal(shadow, evaluate_module(module, [bits]))


def test_mlir_shadow_text() -> None:
    text = ("%0 = stablehlo.constant dense<0xFF80> : tensor<bf16>\n"
            "%1 = arith.constant 0x3F800000 : f32\n"
            "func.func @main(%a: tensor<4x8xbf16>) -> tensor<4xcomplex<f32>>")
    wide = shadow_text(text)
    assert "dense<0xFFF0000000000000> : tensor<f64>" in wide  # -inf
    assert "0x3FF0000000000000 : f64" in wide  # 1.0
    assert "tensor<4x8xf64>" in wide and "complex<f64>" in wide
    assert "bf16" not in wide and "f32" not in wide
    with pytest.raises(Unsupported):
        shadow_text("%0 = arith.bitcast %x : i32 to f32")


def test_mlir_replay_trace_judged_by_the_bound(corpus: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """xDSL traces get the same judgment: the broken pass is far beyond the bound."""
    folder = corpus / "mlir" / "mlir-trace-broken"
    status, payload = run_json(capsys, "mlir-replay", "--json", "--mlir-compilation-trace",
                               folder / "module_0000.jit_f.mlir-trace.pb", "--hlo-snapshot",
                               folder / "module_0000.jit_f.snapshot.0.pb")
    assert status == 1 and payload["culprit"]["pass"] == "ConvertLinalgToLoopsPass"
    culprit = next(r for r in payload["results"] if r["kind"] == "mismatch")
    assert culprit["comparison"]["judged_by"] == "error bound"
    assert culprit["comparison"]["bound"]["ratio"] > 10
    assert payload["shadow_evaluations"] == 2
