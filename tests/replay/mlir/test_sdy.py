"""Shardy annotations in single-device StableHLO: parsed, and the identity."""

from __future__ import annotations

import numpy as np

from tests.helpers.mlir_snippets import run


def test_mesh_and_sharding_constraint() -> None:
    text = """
    module @jit__normal attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
      sdy.mesh @empty_mesh = <[]> {stablehlo.mesh = {axes = []}}
      func.func public @main(%arg0: tensor<2xui32>) -> tensor<2xui32> {
        %0 = sdy.sharding_constraint %arg0 <@empty_mesh, [{}]> : tensor<2xui32>
        %1 = stablehlo.add %0, %0 : tensor<2xui32>
        return %1 : tensor<2xui32>
      }
    }"""
    result = run(text, np.array([1, 2147483648], np.uint32))
    assert result.dtype == np.uint32 and result.tolist() == [2, 0]
