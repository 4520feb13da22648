"""HLO text parser on the real dumps of the corpus, and on damaged or re-spelled copies of them."""

from __future__ import annotations

import math
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from workbench.formats.hlo_text import HloParseError, parse_hlo_text
from workbench.hlo_ir import (
    ConvolutionDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    HloModule,
    PaddingDimension,
    ScatterDimensionNumbers,
    SliceDimension,
    WindowDimension,
)
from workbench.loader import ReadError

XLA = Path("xla")
REDUCERS = Path("xla-jax-tests/numpy-reducers")


def parse(corpus: Path, relative: Path | str) -> HloModule:
    path = corpus / relative
    return parse_hlo_text(path.read_text(), str(relative))


def test_every_corpus_module_parses(hlo_text_modules: dict[Path, HloModule]) -> None:
    assert len(hlo_text_modules) == 1272
    instructions = 0
    for path, module in hlo_text_modules.items():
        assert module.name in path.name
        assert module.entry.is_entry
        assert sum(c.is_entry for c in module.computations) == 1
        for computation in module.computations:
            assert computation.root.name == computation.root_name
            for instruction in computation.instructions:
                assert all(o in computation.by_name for o in instruction.operands)
                assert all(c in module.by_name for c in instruction.called_computations)
        instructions += module.instruction_count()
    assert instructions > 45_000


def test_jit_ln_module(corpus: Path) -> None:
    module = parse(corpus, XLA / "layernorm/module_0010.jit_ln.cpu_after_optimizations.txt")
    assert module.name == "jit_ln"
    assert module.entry_name == "main.3"
    assert module.entry_computation_layout == (
        "(f32[6,8]{1,0}, f32[8]{0}, f32[8]{0})->f32[6,8]{1,0}")
    assert module.attributes == {
        "is_scheduled": "true",
        "allow_spmd_sharding_propagation_to_parameters": "{true,true,true}",
        "allow_spmd_sharding_propagation_to_output": "{true}",
    }
    assert [c.name for c in module.computations] == [
        "fused_computation", "region_1.2", "fused_computation.1", "region_0.1",
        "wrapped_reduce_computation", "main.3"]
    entry = module.entry
    assert entry.root_name == "broadcast_add_fusion"
    assert [p.name for p in entry.parameters] == ["x.1", "g.1", "b.1"]
    fusion = entry.by_name["add_rsqrt_fusion"]
    assert fusion.opcode == "fusion"
    assert fusion.fusion_kind == "kLoop"
    assert fusion.operands == ["x.1", "wrapped_reduce"]
    assert fusion.called_computations == ["fused_computation.1"]
    assert fusion.metadata is not None
    assert fusion.metadata.op_name == "jit(ln)/rsqrt"
    assert fusion.metadata.stack_frame_id == 9
    assert str(entry.by_name["x.1"].shape) == "f32[6,8]{1,0}"
    reduce = module.by_name["fused_computation.1"].by_name["reduce_sum.0"]
    assert reduce.dimensions == (1,)
    assert reduce.called_computations == ["region_1.2"]
    broadcast = module.by_name["fused_computation"].by_name["broadcast.15"]
    assert broadcast.dimensions == ()
    constant = module.by_name["fused_computation.1"].by_name["constant.6"]
    assert constant.literal is not None
    assert constant.literal.dtype == np.float32
    assert constant.literal.shape == ()
    assert constant.literal == np.float32(1e-05)


def test_source_tables(corpus: Path) -> None:
    module = parse(corpus, XLA / "layernorm/module_0010.jit_ln.cpu_after_optimizations.txt")
    source = module.source
    assert source.file_names == {1: "<string>", 2: "program.py"}
    assert source.function_names == {1: "<module>", 2: "ln"}
    assert len(source.file_locations) == 10 and len(source.stack_frames) == 10
    location = source.file_locations[9]
    assert (location.file_name_id, location.function_name_id, location.line, location.end_line,
            location.column, location.end_column) == (2, 2, 4, 4, 21, 44)
    assert source.stack_frames[9].file_location_id == 9
    # Printed as `parent_frame_id=3`: XLA prints parent ids one too high (frame 1, which has
    # no parent, shows itself). The proto says 2, the call site `jax.jit(ln)(...)` of line 6.
    assert source.stack_frames[9].parent_frame_id == 2
    assert source.stack_frames[1].parent_frame_id == 0
    assert source.frame_location(9) == ("program.py", 4, "ln")
    assert source.frame_location(2) == ("program.py", 6, "<module>")


def test_typed_attributes(corpus: Path) -> None:
    ops = parse(corpus, XLA / "int_ops/module_0008.jit_f.0008.simplification"
                ".after_algsimp.before_simplify-sorts.txt")
    window = next(i for c in ops.computations for i in c.instructions
                  if i.name == "reduce-window")
    assert window.window == (WindowDimension(size=1), WindowDimension(size=16, padding_low=15))
    assert str(window.shape) == "f32[2,16]{0,1}"
    pad = next(i for c in ops.computations for i in c.instructions if i.opcode == "pad")
    assert pad.padding_config == (PaddingDimension(0, 12),)

    slicing = parse(corpus, XLA / "slicing/module_0004.jit_f.0008.simplification"
                    ".after_pipeline-start.before_algsimp.txt")
    pad = next(i for c in slicing.computations for i in c.instructions if i.opcode == "pad")
    assert pad.padding_config == (PaddingDimension(1, 1), PaddingDimension(0, 2))
    strided = [i.slice for c in slicing.computations for i in c.instructions if i.slice]
    assert any(any(d.stride != 1 for d in s) for s in strided)
    assert all(isinstance(d, SliceDimension) for s in strided for d in s)

    scatter = parse(corpus, REDUCERS / "module_0092.jit_scatter.before_optimizations.txt")
    root = scatter.entry.root
    assert root.opcode == "scatter"
    assert root.scatter_dimension_numbers == ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
        index_vector_dim=0)
    assert root.attrs == {"indices_are_sorted": "true", "unique_indices": "true"}
    assert root.called_computations == ["region_0.1"]

    sorts = parse(corpus, REDUCERS / "module_0112.jit_wrapped_fun.before_optimizations.txt")
    everything = [i for c in sorts.computations for i in c.instructions]
    compare = next(i for i in everything if i.comparison_type)
    assert (compare.comparison_direction, compare.comparison_type) == ("LT", "TOTALORDER")
    sort = next(i for i in everything if i.opcode == "sort")
    assert sort.is_stable and sort.dimensions == (0,) and len(sort.called_computations) == 1
    gather = next(i for i in everything if i.opcode == "gather")
    assert gather.gather_dimension_numbers == GatherDimensionNumbers(
        offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,), index_vector_dim=1)
    assert gather.gather_slice_sizes == (1, 7)
    quantile = parse(corpus, REDUCERS / "module_0358.jit_quantile.before_optimizations.txt")
    gather = next(i for c in quantile.computations for i in c.instructions
                  if i.opcode == "gather")
    assert gather.gather_dimension_numbers == GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=3,
        operand_batching_dims=(1, 2), start_indices_batching_dims=(1, 2))
    assert gather.gather_slice_sizes == (1, 1, 1)

    cov = parse(corpus, REDUCERS / "module_0034.jit_cov.before_optimizations.txt")
    dot = next(i for c in cov.computations for i in c.instructions if i.opcode == "dot")
    assert dot.dot_dimension_numbers == DotDimensionNumbers(
        lhs_contracting_dims=(1,), rhs_contracting_dims=(0,))
    assert dot.operand_precision == ("highest", "highest")

    normal = parse(corpus, XLA / "mlp/module_0004.jit__normal.before_optimizations.txt")
    call = next(i for c in normal.computations for i in c.instructions
                if i.opcode == "custom-call")
    assert call.custom_call_target == "Sharding"
    assert call.sharding == "{replicated}"
    assert call.attrs["frontend_attributes"] == (
        '{xla.sdy.sharding="#sdy.sharding_per_value<[<@empty_mesh, [{}]>]>"}')
    assert normal.attributes["frontend_attributes"] == (
        "{xla.sdy.meshes={empty_mesh = #sdy.mesh<[]>}}")
    iota = next(i for c in normal.computations for i in c.instructions if i.opcode == "iota")
    assert iota.dimensions is not None and len(iota.dimensions) == 1


def test_while_and_backend_config(corpus: Path) -> None:
    module = parse(corpus, XLA / "fori_loop/module_0002.jit_f.cpu_after_optimizations.txt")
    loop = next(i for c in module.computations for i in c.instructions if i.opcode == "while")
    # XLA's order for while: body first, then condition.
    assert loop.called_computations == ["region_0.2.clone.clone.clone", "region_1.3.clone.clone"]
    assert loop.backend_config is not None
    assert loop.backend_config.startswith('{"known_trip_count":{"n":"10"}')
    assert loop.shape.is_tuple
    assert [str(s) for s in loop.shape.tuple_shapes] == ["s32[]", "f32[16]{0}"]
    gte = next(i for c in module.computations for i in c.instructions
               if i.opcode == "get-tuple-element")
    assert gte.tuple_index is not None


def test_tuple_shape_with_index_comments(corpus: Path) -> None:
    module = parse(corpus, XLA / "mlp/module_0004.jit__normal.before_optimizations.txt")
    loop = next(i for c in module.computations for i in c.instructions if i.opcode == "while")
    assert len(loop.shape.tuple_shapes) == 9  # `/*index=5*/` comments are skipped


def constants(module: HloModule) -> dict[str, object]:
    return {i.name: i for c in module.computations for i in c.instructions
            if i.opcode == "constant"}


def test_constants_of_many_types(corpus: Path) -> None:
    found: dict[str, list[np.ndarray]] = {}
    elided = 0
    for path in sorted((corpus / REDUCERS).glob("*before_optimizations.txt")):
        for instruction in constants(parse_hlo_text(path.read_text(), path.name)).values():
            if instruction.literal_elided:
                assert instruction.literal is None
                elided += 1
                continue
            value = instruction.literal
            assert isinstance(value, np.ndarray)
            assert value.shape == instruction.shape.dims
            found.setdefault(instruction.shape.element_type, []).append(value)
    assert elided > 0
    assert {"f32", "s32", "pred", "f16", "bf16", "c64", "u32", "s8", "s16", "u16"} <= set(found)
    assert found["bf16"][0].dtype == ml_dtypes.bfloat16
    assert found["c64"][0].dtype == np.complex64
    assert found["pred"][0].dtype == np.bool_
    scalars = {t: {v.item() for v in arrays if v.shape == ()} for t, arrays in found.items()}
    assert {-128, 127} <= scalars["s8"]
    assert {-32768, 32767} <= scalars["s16"]
    assert {True, False} <= scalars["pred"]
    assert any(math.isinf(v) and v < 0 for v in scalars["bf16"])
    assert any(math.isnan(v) for v in scalars["f16"])
    assert any(isinstance(v, complex) and math.isnan(v.real) for v in scalars["c64"])
    empty = [v for v in found["c64"] if v.size == 0]
    assert empty and all(v.ndim == 2 for v in empty)


def test_constant_array_values(corpus: Path) -> None:
    module = parse(corpus, XLA / "mlp/module_0004.jit__normal.before_optimizations.txt")
    rotations = [i.literal for i in constants(module).values()
                 if i.shape.dims == (4,) and i.shape.element_type == "u32"]
    assert [list(r) for r in rotations if r is not None][:2] == [[13, 15, 26, 6],
                                                                  [17, 29, 16, 24]]


# ---- re-spelled copies of real modules: the same module, printed as other XLA versions do ----

LN = XLA / "layernorm/module_0010.jit_ln.cpu_after_optimizations.txt"


def signature(module: HloModule) -> list:
    return [(c.name, c.is_entry, c.root_name,
             [(i.name, i.opcode, str(i.shape), i.operands, i.called_computations, i.dimensions,
               i.metadata) for i in c.instructions])
            for c in module.computations]


def test_names_without_percent_signs(corpus: Path) -> None:
    text = (corpus / LN).read_text()
    module = parse_hlo_text(text.replace("%", ""), "ln.txt")
    assert signature(module) == signature(parse(corpus, LN))


def test_line_layouts_read_alike(corpus: Path) -> None:
    """Lines the one-match reading of common lines passes over (comments before a line,
    attributes continued on the next line, tabs, operands without spaces) read as XLA's."""
    text = (corpus / LN).read_text()
    respelled = (text.replace("\n  %sub.0 = ", "\n  /* note */ %sub.0 = ")
                 .replace("%sub.1), metadata=", "%sub.1)\n    , metadata=")
                 .replace("add(%mul.0, %add.2)", "add(\t%mul.0 ,%add.2\t)")
                 .replace("ROOT %rsqrt.2 = ", "ROOT\t%rsqrt.2\t=\t"))
    assert respelled.count("/* note */") == respelled.count("\n    , metadata=") == 1
    assert signature(parse_hlo_text(respelled, "ln.txt")) == signature(parse(corpus, LN))


@pytest.mark.parametrize(
    ("old", "new", "at", "message"),
    [
        ("%sub.0 = f32[6,8]{1,0} subtract(", "%sub.1 = f32[6,8]{1,0} subtract(",
         "%sub.1 = f32[6,8]{1,0} subtract(", "instruction 'sub.1' is defined twice"),
        ("%sub.0 = f32[6,8]{1,0} subtract(", "ROOT %sub.0 = f32[6,8]{1,0} subtract(",
         "ROOT %add.1 = ", "more than one ROOT instruction"),
    ],
)
def test_errors_of_a_computation(corpus: Path, old: str, new: str, at: str,
                                 message: str) -> None:
    text = (corpus / LN).read_text()
    damaged = text.replace(old, new, 1)
    with pytest.raises(HloParseError) as caught:
        parse_hlo_text(damaged, "damaged.txt")
    assert message in caught.value.message
    assert (caught.value.line, caught.value.column) == where(damaged, at)


def test_typed_operands_of_older_dumps(corpus: Path) -> None:
    text = (corpus / LN).read_text()
    reference = parse(corpus, LN)
    shapes = {i.name: str(i.shape) for c in reference.computations for i in c.instructions}

    def typed(match: re.Match) -> str:
        operands = [o.strip() for o in match[2].split(",")]
        return match[1] + "(" + ", ".join(f"{shapes[o[1:]]} {o}" for o in operands) + ")"

    old_style = re.sub(r"( [a-z\-]+)\((%[^()]+)\)", typed, text)
    assert "add(f32[6,8]{1,0} %mul.0, f32[6,8]{1,0} %add.2)" in old_style
    assert signature(parse_hlo_text(old_style, "old.txt")) == signature(reference)


def test_layout_extras_and_dynamic_dimensions(corpus: Path) -> None:
    text = (corpus / LN).read_text()
    text = text.replace("%x.1 = f32[6,8]{1,0}", "%x.1 = f32[<=6,8]{1,0:T(8,128)S(1)}")
    text = text.replace("%g.1 = f32[8]{0}", "%g.1 = f32[?]{0}")
    entry = parse_hlo_text(text, "ln.txt").entry
    x = entry.by_name["x.1"].shape
    assert (x.dims, x.dynamic, x.layout, x.layout_extra) == ((6, 8), (True, False), (1, 0),
                                                             "T(8,128)S(1)")
    assert str(x) == "f32[<=6,8]{1,0:T(8,128)S(1)}"
    g = entry.by_name["g.1"].shape
    assert (g.dims, g.dynamic) == ((-1,), (True,))
    assert str(g) == "f32[?]{0}"


def test_unknown_attributes_are_kept_verbatim(corpus: Path) -> None:
    text = (corpus / LN).read_text().replace(
        "kind=kLoop, calls=%fused_computation.1,",
        'kind=kLoop, calls=%fused_computation.1, new_flag={a=[1,2] b="x, y"}, level=3,')
    fusion = parse_hlo_text(text, "ln.txt").entry.by_name["add_rsqrt_fusion"]
    assert fusion.attrs == {"new_flag": '{a=[1,2] b="x, y"}', "level": "3"}
    assert fusion.called_computations == ["fused_computation.1"]


def test_convolution_and_tuple_constant(corpus: Path) -> None:
    """Attributes the JAX corpus never prints, spliced into a real module."""
    text = (corpus / LN).read_text().replace(
        "%constant.5 = f32[] constant(0)",
        "%constant.5 = f32[] constant(0)\n"
        "  %pair = (f32[2]{0}, s32[]) constant(({1.5, -inf}, 7))\n"
        "  %conv = f32[6,8]{1,0} convolution(%x.1, %x.1), window={size=3x1 stride=2x1 "
        "pad=1_1x0_0 lhs_dilate=1x1 rhs_dilate=2x1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f,"
        " feature_group_count=2")
    entry = parse_hlo_text(text, "ln.txt").entry
    pair = entry.by_name["pair"].literal
    assert isinstance(pair, tuple) and len(pair) == 2
    assert pair[0].tolist() == [1.5, -math.inf] and pair[1].dtype == np.int32 and pair[1] == 7
    conv = entry.by_name["conv"]
    assert conv.window == (
        WindowDimension(size=3, stride=2, padding_low=1, padding_high=1, window_dilation=2,
                        window_reversal=True),
        WindowDimension(size=1))
    assert conv.convolution_dimension_numbers == ConvolutionDimensionNumbers(
        input_batch_dimension=0, input_feature_dimension=3, input_spatial_dimensions=(1, 2),
        kernel_input_feature_dimension=2, kernel_output_feature_dimension=3,
        kernel_spatial_dimensions=(0, 1), output_batch_dimension=0, output_feature_dimension=3,
        output_spatial_dimensions=(1, 2))
    assert conv.feature_group_count == 2


# ---- damaged copies: errors name the file, the line and the column ----


def where(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the first `needle` in `text`."""
    offset = text.index(needle)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


@pytest.mark.parametrize(
    ("old", "new", "at", "message"),
    [
        ("%x.1 = f32[6,8]{1,0}", "%x.1 = f33[6,8]{1,0}", "f33[", "unknown element type 'f33'"),
        ("%x.1 = f32[6,8]{1,0}", "%x.1 = f32[6,8]{1,0,2}", "{1,0,2}", "does not match rank"),
        # a digit-like character that is not a decimal digit (str.isdigit takes it, int not)
        ("%x.1 = f32[6,8]{1,0}", "%x.1 = f32[6,\u00b2]{1,0}", "\u00b2", "bad dimension '\u00b2'"),
        ("%broadcast.15 = f32[6]{0} broadcast(%constant.2)",
         "%broadcast.15 = f32[6]{0} broadcast(%constant.9)", "%constant.9", "unknown operand"),
        # an operand renamed to one defined later, or to the instruction itself
        ("subtract(%param_3.2, %sub.1)", "subtract(%param_3.2, %mul.2)", "%mul.2)",
         "operand %mul.2 is used before its definition"),
        ("subtract(%param_3.2, %sub.1)", "subtract(%param_3.2, %sub.0)", "%sub.0)",
         "operand %sub.0 is used before its definition"),
        ("calls=%fused_computation.1,", "calls=%no_such_computation,", "%no_such_computation",
         "unknown computation 'no_such_computation'"),
        ("%constant.6 = f32[] constant(1e-05)", "%constant.6 = f32[] constant(1e-05x)",
         "1e-05x", "bad f32 value"),
        ("%constant.6 = f32[] constant(1e-05)", "%constant.6 = f32[2]{0} constant({1})",
         "{1})", "has 1 elements, expected 2"),
    ],
)
def test_errors_point_at_the_damage(corpus: Path, old: str, new: str, at: str,
                                    message: str) -> None:
    text = (corpus / LN).read_text()
    assert old in text
    damaged = text.replace(old, new, 1)
    with pytest.raises(HloParseError) as caught:
        parse_hlo_text(damaged, "damaged.txt")
    error = caught.value
    assert isinstance(error, ReadError)
    assert message in error.message
    assert (error.line, error.column) == where(damaged, at)
    assert str(error).startswith(f"damaged.txt: line {error.line}, column {error.column}: ")


def test_attribute_errors_point_into_the_value(corpus: Path) -> None:
    text = (corpus / LN).read_text().replace("dimensions={1}, to_apply=%region_1.2",
                                             "dimensions={1,x}, to_apply=%region_1.2")
    with pytest.raises(HloParseError) as caught:
        parse_hlo_text(text, "d.txt")
    assert "dimensions: expected an integer, got 'x'" in caught.value.message
    assert (caught.value.line, caught.value.column) == where(text, "x}, to_apply")


def test_truncated_module(corpus: Path) -> None:
    text = (corpus / LN).read_text()
    cut = text[: text.index("%add_rsqrt_fusion") + 30]
    with pytest.raises(HloParseError) as caught:
        parse_hlo_text(cut, "cut.txt")
    assert caught.value.line == cut.count("\n") + 1


@pytest.mark.parametrize("text", ["", "   \n", "not an hlo module", "HloModule m\n"])
def test_not_a_module(text: str) -> None:
    with pytest.raises(HloParseError):
        parse_hlo_text(text, "x.txt")


def test_special_float_constants(corpus: Path) -> None:
    """NaN signs and payloads, -0, infinities, complex and bf16 arrays, spliced into a real
    module the way XLA prints them."""
    text = (corpus / LN).read_text().replace(
        "%constant.5 = f32[] constant(0)",
        "%constant.5 = f32[] constant(0)\n"
        "  %specials = f32[5]{0} constant({-nan, nan(0x1), -0, inf, -inf})\n"
        "  %halves = bf16[2,2]{1,0} constant({ {0.00195312, -3.5}, {65280, nan} })\n"
        "  %complex = c64[2]{0} constant({(1, -2), (-inf, nan)})\n"
        "  %flags = pred[3]{0} constant({1, 0, 1})\n"
        "  %wide = u64[2]{0} constant({0, 18446744073709551615})")
    entry = parse_hlo_text(text, "ln.txt").entry
    specials = entry.by_name["specials"].literal
    bits = specials.view(np.uint32).tolist()
    assert bits[0] == 0xFFC00000  # -nan: sign set, quiet NaN
    assert bits[1] == 0x7F800001  # nan(0x1): the payload, exactly
    assert bits[2] == 0x80000000  # -0
    assert specials[3] == np.inf and specials[4] == -np.inf
    halves = entry.by_name["halves"].literal
    assert halves.dtype == ml_dtypes.bfloat16
    assert halves.astype(np.float32)[0].tolist() == [0.001953125, -3.5]
    assert halves.astype(np.float32)[1, 0] == 65280 and np.isnan(halves.astype(np.float32)[1, 1])
    complex_values = entry.by_name["complex"].literal
    assert complex_values.dtype == np.complex64
    assert complex_values[0] == 1 - 2j
    assert complex_values[1].real == -np.inf and np.isnan(complex_values[1].imag)
    assert entry.by_name["flags"].literal.tolist() == [True, False, True]
    assert entry.by_name["wide"].literal.tolist() == [0, 2**64 - 1]


@pytest.mark.parametrize(("literal", "message"), [
    ("s8[] constant(128)", "128 out of range for s8"),
    ("pred[] constant(2)", "'2' is not true/false"),
    ("f32[2,2]{1,0} constant({1, 2, 3, 4})", "nests 1 levels of braces"),
    ("token[] constant(0)", "a token value cannot be a literal"),
])
def test_bad_constants(corpus: Path, literal: str, message: str) -> None:
    text = (corpus / LN).read_text().replace("f32[] constant(0)", literal, 1)
    with pytest.raises(HloParseError, match=re.escape(message)):
        parse_hlo_text(text, "ln.txt")
