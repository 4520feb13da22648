#loc1 = loc("args[0]")
module @jit_convert_element_type attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32> loc("args[0]")) -> (tensor<f32> {jax.result_info = "result"}) {
    return %arg0 : tensor<f32> loc(#loc7)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("/work/steering/tools/gpu/programs.py":73:104 to :117)
#loc3 = loc("/work/steering/tools/gpu/programs.py":175:10 to :33)
#loc4 = loc("sort_topk_scatter"(#loc2))
#loc5 = loc("<module>"(#loc3))
#loc6 = loc(callsite(#loc4 at #loc5))
#loc7 = loc("jit(convert_element_type)"(#loc6))
