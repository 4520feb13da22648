module @bitcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  func.func @bitcast_add_fusion(%arg0: tensor<3x4xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 0 : index}, %arg1: tensor<3x4xf32> {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, xla.invariant, xla.slice_index = 1 : index}, %arg2: tensor<4xf32> {llvm.align = 64 : index, llvm.dereferenceable = 16 : index, xla.slice_index = 2 : index}) -> tensor<4xf32> attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %1 = xla.workgroup_id y {xla.range = [0 : index, 0 : index]}
    %2 = xla.workgroup_id z {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%arg3, %arg4, %arg5) in (1, 1, 1) shared_outs(%arg6 = %arg2) -> (tensor<4xf32>) {
      %xla_loop = xla.loop (%arg3, %arg4, %arg5, %0, %1, %2)[%i] -> (%ra) in #xla.indexing_map<"(th_x, th_y, th_z, bl_x, bl_y, bl_z)[s0] -> (s0), domain: th_x in [0, 0], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], bl_z in [0, 0], s0 in [0, 3]"> iter_args(%iter = %arg6) -> (tensor<4xf32>) {
        %pure_call = xla.pure_call @fused_computation_add_0(%arg0, %arg1, %ra) : (tensor<3x4xf32>, tensor<3x4xf32>, index) -> f32
        %inserted = tensor.insert %pure_call into %iter[%ra] : tensor<4xf32>
        xla.yield %inserted : tensor<4xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %xla_loop into %arg6[0] [4] [1] : tensor<4xf32> into tensor<4xf32>
      }
    }
    return %3 : tensor<4xf32>
  }
  func.func private @fused_computation_add_0(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xf32>, %arg2: index {xla.range = [0 : index, 3 : index]}) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %cst = arith.constant 0.000000e+00 : f32
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %0 = scf.for %arg3 = %c0 to %c3 step %c1 iter_args(%arg4 = %cst) -> (f32) {
      %true = arith.constant true
      %c0_1 = arith.constant 0 : index
      %c3_2 = arith.constant 3 : index
      %5 = arith.cmpi sge, %arg2, %c0_1 : index
      %6 = arith.cmpi sle, %arg2, %c3_2 : index
      %7 = arith.andi %5, %6 : i1
      %8 = arith.andi %true, %7 : i1
      %9 = scf.if %8 -> (f32) {
        %extracted_3 = tensor.extract %arg1[%arg3, %arg2] : tensor<3x4xf32>
        %10 = math.tanh %extracted_3 : f32
        %11 = func.call @region_0_1_reduce_sum_5(%arg4, %10) {xla.is_reduction} : (f32, f32) -> f32
        scf.yield %11 : f32
      } else {
        scf.yield %arg4 : f32
      }
      scf.yield %9 : f32
    }
    %cst_0 = arith.constant 2.000000e+00 : f32
    %1 = arith.mulf %0, %cst_0 : f32
    %2 = xla.apply_indexing #xla.indexing_map<"(d0) -> (d0 / 4), domain: d0 in [0, 3]">(%arg2)
    %extracted = tensor.extract %arg0[%2, %arg2] : tensor<3x4xf32>
    %3 = math.exp %extracted : f32
    %4 = arith.addf %1, %3 : f32
    return %4 : f32
  }
  func.func private @region_0_1_reduce_sum_5(%arg0: f32, %arg1: f32) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
    %0 = arith.addf %arg0, %arg1 : f32
    return %0 : f32
  }
}