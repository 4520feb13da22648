#loc = loc(unknown)
#loc1 = loc("x")
#loc4 = loc("reduce_window_sum")
#loc7 = loc("reduce_window_sum:"(#loc4))
module @jit_cumsums attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x512xbf16> loc("x")) -> (tensor<4x512xbf16> {jax.result_info = "result"}) {
    %0 = call @cumsum(%arg0) : (tensor<4x512xbf16>) -> tensor<4x512xbf16> loc(#loc10)
    return %0 : tensor<4x512xbf16> loc(#loc9)
  } loc(#loc)
  func.func private @cumsum(%arg0: tensor<4x512xbf16> loc(unknown)) -> tensor<4x512xbf16> {
    %0 = call @cumsum_0(%arg0) : (tensor<4x512xbf16>) -> tensor<4x512xbf16> loc(#loc)
    return %0 : tensor<4x512xbf16> loc(#loc)
  } loc(#loc12)
  func.func private @cumsum_0(%arg0: tensor<4x512xbf16> loc(unknown)) -> tensor<4x512xbf16> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16> loc(#loc4)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<bf16> loc(#loc4)
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [511, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 512>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<bf16> loc("reduce_window_sum:"(#loc4)), %arg2: tensor<bf16> loc("reduce_window_sum:"(#loc4))):
      %2 = stablehlo.add %arg1, %arg2 : tensor<bf16> loc(#loc4)
      stablehlo.return %2 : tensor<bf16> loc(#loc4)
    }) : (tensor<4x512xbf16>, tensor<bf16>) -> tensor<4x512xbf16> loc(#loc4)
    return %1 : tensor<4x512xbf16> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("program.py":28:15 to :37)
#loc3 = loc("program.py":30:10 to :29)
#loc5 = loc("cumsums"(#loc2))
#loc6 = loc("<module>"(#loc3))
#loc8 = loc(callsite(#loc5 at #loc6))
#loc9 = loc("jit(cumsums)"(#loc6))
#loc10 = loc("jit(cumsums)/jit(cumsum)"(#loc8))
#loc11 = loc("jit(cumsums)/jit"(#loc8))
#loc12 = loc("jit:"(#loc11))
