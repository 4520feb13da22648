"""bufferization: conversions copy, so a tensor never changes when its buffer is written."""

from __future__ import annotations

import numpy as np

from tests.helpers.mlir_snippets import run


def test_to_tensor_is_a_snapshot_of_the_buffer() -> None:
    text = """
    func.func @main(%m: memref<2xf32, strided<[?], offset: ?>>, %v: f32)
        -> (tensor<2xf32>, memref<2xf32>) {
      %c0 = arith.constant 0 : index
      %t = bufferization.to_tensor %m : memref<2xf32, strided<[?], offset: ?>> to tensor<2xf32>
      memref.store %v, %m[%c0] : memref<2xf32, strided<[?], offset: ?>>
      %b = bufferization.to_buffer %t : tensor<2xf32> to memref<2xf32>
      memref.store %v, %b[%c0] : memref<2xf32>
      return %t, %b : tensor<2xf32>, memref<2xf32>
    }"""
    tensor, buffer = run(text, np.array([1, 2], np.float32), np.float32(np.nan))
    assert tensor.tolist() == [1, 2]
    assert np.isnan(buffer[0]) and buffer[1] == 2


def test_materialize_clone_and_alloc_tensor() -> None:
    text = """
    func.func @main(%t: tensor<2xi8>, %m: memref<2xi8>)
        -> (memref<2xi8>, tensor<2xi8>, tensor<2xi8>) {
      bufferization.materialize_in_destination %t in writable %m
          : (tensor<2xi8>, memref<2xi8>) -> ()
      %c = bufferization.clone %m : memref<2xi8> to memref<2xi8>
      %a = bufferization.alloc_tensor() copy(%t) : tensor<2xi8>
      %e = bufferization.alloc_tensor() : tensor<2xi8>
      return %c, %a, %e : memref<2xi8>, tensor<2xi8>, tensor<2xi8>
    }"""
    clone, copied, empty = run(text, np.array([127, -128], np.int8), np.zeros(2, np.int8))
    assert clone.tolist() == [127, -128] and copied.tolist() == [127, -128]
    assert empty.tolist() == [-91, -91]  # 0xA5: not data the program wrote


def test_older_printed_forms_parse() -> None:
    from workbench.replay.mlir.parse import parse_module

    module, _ = parse_module("""
    func.func @main(%m: memref<2xf32>, %t: tensor<2xf32>) -> (tensor<2xf32>, memref<2xf32>) {
      %a = bufferization.to_tensor %m restrict writable : memref<2xf32>
      %b = bufferization.to_memref %t : memref<2xf32>
      return %a, %b : tensor<2xf32>, memref<2xf32>
    }""")
    names = [op.name for op in module.walk()]
    assert "bufferization.to_tensor" in names and "bufferization.to_memref" in names
