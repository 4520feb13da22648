"""`Shape.nbytes`: the one size every memory check is sized by (a snapshot's declared arrays,
the evaluator's plan, whether a replay keeps its values on disk)."""

from __future__ import annotations

import numpy as np

from workbench.formats.hlo_text import parse_hlo_text
from workbench.hlo_ir import Shape


def test_an_array_takes_its_elements_times_their_width_exactly() -> None:
    assert Shape("f32", (3, 5)).nbytes == 60
    assert Shape("bf16", (7,)).nbytes == 14
    assert Shape("c128", ()).nbytes == 16
    assert Shape("pred", (0, 9)).nbytes == 0
    assert Shape("s4", (10,)).nbytes == 10  # held a byte an element, as numpy holds it
    # Beyond 64 bits: no overflow, unlike a numpy product.
    assert Shape("f64", (2**40, 2**30)).nbytes == 2**73


def test_a_tuple_sums_its_elements_and_a_token_takes_nothing() -> None:
    shape = Shape("tuple", tuple_shapes=(Shape("f32", (4,)), Shape("token"),
                                         Shape("tuple", tuple_shapes=(Shape("s8", (3,)),))))
    assert shape.nbytes == 16 + 0 + 3
    assert Shape("opaque").nbytes == 0


def test_a_dynamic_dimension_counts_at_its_bound_and_an_unbounded_one_as_empty() -> None:
    module = parse_hlo_text("HloModule m\n\nENTRY e {\n"
                            "  p = f32[<=8,3] parameter(0)\n"
                            "  ROOT q = f32[?,3] parameter(1)\n}\n", "m")
    bounded, unbounded = (i.shape for i in module.entry.instructions)
    assert bounded.nbytes == 8 * 3 * 4
    assert unbounded.nbytes == 0


def test_it_agrees_with_numpy_for_every_type_numpy_holds_and_is_0_for_the_others() -> None:
    from workbench.hlo_ir import ARRAY_TYPES, numpy_dtype

    for element_type in ARRAY_TYPES:
        try:
            dtype = numpy_dtype(element_type)
        except ValueError:  # an ml_dtypes without this type (the oldest the project allows)
            assert Shape(element_type, (2, 3)).nbytes == 0, element_type
            continue
        assert Shape(element_type, (2, 3)).nbytes == np.zeros((2, 3), dtype).nbytes, element_type
