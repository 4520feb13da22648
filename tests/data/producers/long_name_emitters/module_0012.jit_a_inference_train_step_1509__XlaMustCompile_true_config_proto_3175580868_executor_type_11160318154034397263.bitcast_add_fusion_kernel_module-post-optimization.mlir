module @bitcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @bitcast_add_fusion(%arg0: tensor<12xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<12xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<4xf32> {llvm.align = 64 : index, llvm.dereferenceable = 16 : index, xla.slice_index = 2 : index}) -> tensor<4xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %c4 = arith.constant 4 : index
    %cst = arith.constant 2.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %0 = scf.for %arg3 = %c0 to %c4 step %c1 iter_args(%arg4 = %arg2) -> (tensor<4xf32>) {
      %1 = scf.for %arg5 = %c0 to %c3 step %c1 iter_args(%arg6 = %cst_0) -> (f32) {
        %5 = xla.apply_indexing #xla.indexing_map<"(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 2], d1 in [0, 3]">(%arg5, %arg3)
        %extracted_1 = tensor.extract %arg1[%5] : tensor<12xf32>
        %6 = math.tanh %extracted_1 : f32
        %7 = arith.addf %arg6, %6 fastmath<reassoc> : f32
        scf.yield %7 : f32
      }
      %2 = arith.mulf %1, %cst : f32
      %extracted = tensor.extract %arg0[%arg3] : tensor<12xf32>
      %3 = math.exp %extracted : f32
      %4 = arith.addf %2, %3 : f32
      %inserted = tensor.insert %4 into %arg4[%arg3] : tensor<4xf32>
      scf.yield %inserted : tensor<4xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    return %0 : tensor<4xf32>
  }
}