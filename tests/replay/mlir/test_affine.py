"""affine: maps evaluated with dimensions then symbols, loop bounds from max/min."""

from __future__ import annotations

import numpy as np

from tests.helpers.mlir_snippets import run


def test_affine_loops_loads_and_stores() -> None:
    text = """
    #shift = affine_map<(d0)[s0] -> (d0 + s0)>
    func.func @main(%src: memref<6xi32>, %dst: memref<3xi32>) -> (memref<3xi32>, index) {
      %c2 = arith.constant 2 : index
      affine.for %i = 0 to 3 {
        %j = affine.apply #shift(%i)[%c2]
        %v = affine.load %src[%j] : memref<6xi32>
        affine.store %v, %dst[%i] : memref<3xi32>
      }
      %m = affine.min affine_map<(d0) -> (d0, 7)>(%c2)
      return %dst, %m : memref<3xi32>, index
    }"""
    out, smallest = run(text, np.arange(6, dtype=np.int32) * -1, np.zeros(3, np.int32))
    assert out.tolist() == [-2, -3, -4]
    assert int(smallest) == 2
