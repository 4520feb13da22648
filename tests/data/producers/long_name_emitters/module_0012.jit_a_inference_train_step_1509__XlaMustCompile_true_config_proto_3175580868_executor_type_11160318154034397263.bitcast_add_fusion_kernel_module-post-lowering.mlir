module @bitcast_add_fusion_kernel_module attributes {dlti.dl_spec = #dlti.dl_spec<index = 64 : i32>, xla.cpu_memory_region_name = "xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"} {
  llvm.func @xla.tanh.f32(f32) -> f32 attributes {sym_visibility = "private"}
  llvm.func @bitcast_add_fusion(%arg0: !llvm.ptr {llvm.nonnull, llvm.noundef}) -> !llvm.ptr attributes {frame_pointer = #llvm.framePointerKind<all>, passthrough = [["prefer-vector-width", "256"]], uwtable_kind = #llvm.uwtableKind<async>} {
    %0 = llvm.mlir.zero : !llvm.ptr
    %1 = llvm.getelementptr inbounds %arg0[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"XLA_CPU_KernelCallFrame", (ptr, ptr, i64, ptr)>
    %2 = llvm.load %1 invariant : !llvm.ptr -> !llvm.ptr
    %3 = llvm.getelementptr inbounds %2[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"XLA_CPU_KernelArg", (ptr, i64)>
    %4 = llvm.load %3 invariant dereferenceable<bytes = 48> : !llvm.ptr -> !llvm.ptr
    %5 = llvm.getelementptr inbounds %2[1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"XLA_CPU_KernelArg", (ptr, i64)>
    %6 = llvm.load %5 invariant dereferenceable<bytes = 48> : !llvm.ptr -> !llvm.ptr
    %7 = llvm.getelementptr inbounds %2[2, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"XLA_CPU_KernelArg", (ptr, i64)>
    %8 = llvm.load %7 invariant dereferenceable<bytes = 16> : !llvm.ptr -> !llvm.ptr
    %9 = llvm.getelementptr inbounds %arg0[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"XLA_CPU_KernelCallFrame", (ptr, ptr, i64, ptr)>
    %10 = llvm.load %9 : !llvm.ptr -> !llvm.ptr
    %11 = llvm.getelementptr inbounds %10[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"kernel_dim3", (i64, i64, i64)>
    %12 = llvm.load %11 invariant : !llvm.ptr -> i64
    %13 = llvm.getelementptr inbounds %10[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"kernel_dim3", (i64, i64, i64)>
    %14 = llvm.load %13 invariant : !llvm.ptr -> i64
    %15 = llvm.getelementptr inbounds %10[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<"kernel_dim3", (i64, i64, i64)>
    %16 = llvm.load %15 invariant : !llvm.ptr -> i64
    llvm.call @bitcast_add_fusion_wrapped(%4, %6, %8, %12, %14, %16) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
    llvm.return %0 : !llvm.ptr
  }
  llvm.func internal @bitcast_add_fusion_wrapped(%arg0: !llvm.ptr {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, llvm.noalias, xla.invariant}, %arg1: !llvm.ptr {llvm.align = 64 : index, llvm.dereferenceable = 48 : index, llvm.noalias, xla.invariant}, %arg2: !llvm.ptr {llvm.align = 64 : index, llvm.dereferenceable = 16 : index, llvm.noalias}, %arg3: i64, %arg4: i64, %arg5: i64) attributes {xla.backend_kind = #xla.backend_kind<cpu>, xla.cpu.is_wrapped, xla.entry, always_inline, sym_visibility = "private"} {
    %0 = llvm.mlir.constant(3 : i64) : i64
    %1 = llvm.mlir.constant(0 : i64) : i64
    %2 = llvm.mlir.constant(1 : i64) : i64
    %3 = llvm.mlir.constant(0.000000e+00 : f32) : f32
    %4 = llvm.mlir.constant(2.000000e+00 : f32) : f32
    %5 = llvm.mlir.constant(4 : i64) : i64
    llvm.br ^bb1(%1 : i64)
  ^bb1(%6: i64):  // 2 preds: ^bb0, ^bb5
    %7 = llvm.icmp "slt" %6, %5 : i64
    llvm.cond_br %7, ^bb2, ^bb6
  ^bb2:  // pred: ^bb1
    llvm.br ^bb3(%1, %3 : i64, f32)
  ^bb3(%8: i64, %9: f32):  // 2 preds: ^bb2, ^bb4
    %10 = llvm.icmp "slt" %8, %0 : i64
    llvm.cond_br %10, ^bb4, ^bb5
  ^bb4:  // pred: ^bb3
    %11 = llvm.mul %8, %5 overflow<nsw> : i64
    %12 = llvm.add %6, %11 overflow<nsw> : i64
    %13 = llvm.getelementptr inbounds %arg1[0, %12] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<12 x f32>
    %14 = llvm.load %13 invariant : !llvm.ptr -> f32
    %15 = llvm.call @xla.tanh.f32(%14) : (f32) -> f32
    %16 = llvm.fadd %9, %15 fastmath<reassoc> : f32
    %17 = llvm.add %8, %2 overflow<nsw> : i64
    llvm.br ^bb3(%17, %16 : i64, f32)
  ^bb5:  // pred: ^bb3
    %18 = llvm.fmul %9, %4 : f32
    %19 = llvm.getelementptr inbounds %arg0[0, %6] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<12 x f32>
    %20 = llvm.load %19 invariant : !llvm.ptr -> f32
    %21 = llvm.intr.exp(%20) : (f32) -> f32
    %22 = llvm.fadd %18, %21 : f32
    %23 = llvm.getelementptr inbounds %arg2[0, %6] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<4 x f32>
    llvm.store %22, %23 : f32, !llvm.ptr
    %24 = llvm.add %6, %2 overflow<nsw> : i64
    llvm.br ^bb1(%24 : i64) loop_annotation = <unroll = <disable = true>>
  ^bb6:  // pred: ^bb1
    llvm.return
  }
}