module @jit_f attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{mesh['x'=4,'y'=2], [{'x'}, {}]}"}, %arg1: tensor<4x2xf32> {mhlo.sharding = "{mesh['x'=4,'y'=2], [{}, {'y'}]}"}) -> (tensor<2xf32> {mhlo.sharding = "{mesh['x'=4,'y'=2], [{'y'}]}"}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {mhlo.sharding = "{mesh['x'=4,'y'=2], [{'x'}, {'y'}]}"} : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %1 = stablehlo.tanh %0 {mhlo.sharding = "{mesh['x'=4,'y'=2], [{'x'}, {'y'}]}"} : tensor<8x2xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] {mhlo.sharding = "{mesh['x'=4,'y'=2], [{'y'}]}"} : (tensor<8x2xf32>, tensor<f32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  }
}
