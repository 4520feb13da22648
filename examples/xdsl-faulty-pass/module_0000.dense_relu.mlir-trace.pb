
è
CanonicalizePass˙builtin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %half = arith.constant 5.000000e-01 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<4x16xf32>)
    linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%acc : memref<4x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
    ^bb0(%v: f32, %bias: f32, %out: f32):
      %sum = arith.addf %v, %bias : f32
      %relu = arith.maximumf %sum, %zero : f32
      %scaled = arith.mulf %relu, %half : f32
      linalg.yield %scaled : f32
    }
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}

ß
LinalgGeneralizeNamedOpsPassÜbuiltin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %half = arith.constant 5.000000e-01 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%zero : f32) outs(%acc : memref<4x16xf32>) {
    ^bb0(%0: f32, %1: f32):
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%acc : memref<4x16xf32>) {
    ^bb0(%2: f32, %3: f32, %4: f32):
      %5 = arith.mulf %2, %3 : f32
      %6 = arith.addf %5, %4 : f32
      linalg.yield %6 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
    ^bb0(%v: f32, %bias: f32, %out: f32):
      %sum = arith.addf %v, %bias : f32
      %relu = arith.maximumf %sum, %zero : f32
      %scaled = arith.mulf %relu, %half : f32
      linalg.yield %scaled : f32
    }
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}

Ê
ConvertLinalgToLoopsPass…builtin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %half = arith.constant 5.000000e-01 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    %0 = arith.constant 4 : index
    %1 = arith.constant 16 : index
    %2 = arith.constant 0 : index
    %3 = arith.constant 1 : index
    scf.for %4 = %2 to %0 step %3 {
      scf.for %5 = %2 to %1 step %3 {
        memref.store %zero, %acc[%4, %5] : memref<4x16xf32>
      }
    }
    %6 = arith.constant 4 : index
    %7 = arith.constant 16 : index
    %8 = arith.constant 8 : index
    %9 = arith.constant 0 : index
    %10 = arith.constant 1 : index
    scf.for %11 = %9 to %6 step %10 {
      scf.for %12 = %9 to %7 step %10 {
        scf.for %13 = %9 to %8 step %10 {
          %14 = memref.load %x[%11, %13] : memref<4x8xf32>
          %15 = memref.load %w[%13, %12] : memref<8x16xf32>
          %16 = memref.load %acc[%11, %12] : memref<4x16xf32>
          %17 = arith.mulf %14, %15 : f32
          %18 = arith.addf %17, %16 : f32
          memref.store %18, %acc[%11, %12] : memref<4x16xf32>
        }
      }
    }
    %19 = arith.constant 4 : index
    %20 = arith.constant 16 : index
    %21 = arith.constant 0 : index
    %22 = arith.constant 1 : index
    scf.for %23 = %21 to %19 step %22 {
      scf.for %24 = %21 to %20 step %22 {
        %v = memref.load %acc[%23, %24] : memref<4x16xf32>
        %bias = memref.load %b[%24] : memref<16xf32>
        %sum = arith.addf %v, %bias : f32
        %relu = arith.maximumf %sum, %zero : f32
        %scaled = arith.mulf %relu, %half : f32
        memref.store %scaled, %y[%23, %24] : memref<4x16xf32>
      }
    }
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}

Ë
StrengthReduceMultiplyPass…builtin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %half = arith.constant 5.000000e-01 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    %0 = arith.constant 4 : index
    %1 = arith.constant 16 : index
    %2 = arith.constant 0 : index
    %3 = arith.constant 1 : index
    scf.for %4 = %2 to %0 step %3 {
      scf.for %5 = %2 to %1 step %3 {
        memref.store %zero, %acc[%4, %5] : memref<4x16xf32>
      }
    }
    %6 = arith.constant 4 : index
    %7 = arith.constant 16 : index
    %8 = arith.constant 8 : index
    %9 = arith.constant 0 : index
    %10 = arith.constant 1 : index
    scf.for %11 = %9 to %6 step %10 {
      scf.for %12 = %9 to %7 step %10 {
        scf.for %13 = %9 to %8 step %10 {
          %14 = memref.load %x[%11, %13] : memref<4x8xf32>
          %15 = memref.load %w[%13, %12] : memref<8x16xf32>
          %16 = memref.load %acc[%11, %12] : memref<4x16xf32>
          %17 = arith.mulf %14, %15 : f32
          %18 = arith.addf %17, %16 : f32
          memref.store %18, %acc[%11, %12] : memref<4x16xf32>
        }
      }
    }
    %19 = arith.constant 4 : index
    %20 = arith.constant 16 : index
    %21 = arith.constant 0 : index
    %22 = arith.constant 1 : index
    scf.for %23 = %21 to %19 step %22 {
      scf.for %24 = %21 to %20 step %22 {
        %v = memref.load %acc[%23, %24] : memref<4x16xf32>
        %bias = memref.load %b[%24] : memref<16xf32>
        %sum = arith.addf %v, %bias : f32
        %relu = arith.maximumf %sum, %zero : f32
        %scaled = arith.addf %relu, %relu : f32
        memref.store %scaled, %y[%23, %24] : memref<4x16xf32>
      }
    }
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}

ì
CommonSubexpressionEliminationbuiltin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    %0 = arith.constant 4 : index
    %1 = arith.constant 16 : index
    %2 = arith.constant 0 : index
    %3 = arith.constant 1 : index
    scf.for %4 = %2 to %0 step %3 {
      scf.for %5 = %2 to %1 step %3 {
        memref.store %zero, %acc[%4, %5] : memref<4x16xf32>
      }
    }
    %6 = arith.constant 8 : index
    scf.for %7 = %2 to %0 step %3 {
      scf.for %8 = %2 to %1 step %3 {
        scf.for %9 = %2 to %6 step %3 {
          %10 = memref.load %x[%7, %9] : memref<4x8xf32>
          %11 = memref.load %w[%9, %8] : memref<8x16xf32>
          %12 = memref.load %acc[%7, %8] : memref<4x16xf32>
          %13 = arith.mulf %10, %11 : f32
          %14 = arith.addf %13, %12 : f32
          memref.store %14, %acc[%7, %8] : memref<4x16xf32>
        }
      }
    }
    scf.for %15 = %2 to %0 step %3 {
      scf.for %16 = %2 to %1 step %3 {
        %v = memref.load %acc[%15, %16] : memref<4x16xf32>
        %bias = memref.load %b[%16] : memref<16xf32>
        %sum = arith.addf %v, %bias : f32
        %relu = arith.maximumf %sum, %zero : f32
        %scaled = arith.addf %relu, %relu : f32
        memref.store %scaled, %y[%15, %16] : memref<4x16xf32>
      }
    }
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}

ù
ConvertScfToCfäbuiltin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    %0 = arith.constant 4 : index
    %1 = arith.constant 16 : index
    %2 = arith.constant 0 : index
    %3 = arith.constant 1 : index
    cf.br ^bb1(%2 : index)
  ^bb1(%4: index):
    %5 = arith.cmpi slt, %4, %0 : index
    cf.cond_br %5, ^bb2, ^bb6
  ^bb2:
    cf.br ^bb3(%2 : index)
  ^bb3(%6: index):
    %7 = arith.cmpi slt, %6, %1 : index
    cf.cond_br %7, ^bb4, ^bb5
  ^bb4:
    memref.store %zero, %acc[%4, %6] : memref<4x16xf32>
    %8 = arith.addi %6, %3 : index
    cf.br ^bb3(%8 : index)
  ^bb5:
    %9 = arith.addi %4, %3 : index
    cf.br ^bb1(%9 : index)
  ^bb6:
    %10 = arith.constant 8 : index
    cf.br ^bb7(%2 : index)
  ^bb7(%11: index):
    %12 = arith.cmpi slt, %11, %0 : index
    cf.cond_br %12, ^bb8, ^bb15
  ^bb8:
    cf.br ^bb9(%2 : index)
  ^bb9(%13: index):
    %14 = arith.cmpi slt, %13, %1 : index
    cf.cond_br %14, ^bb10, ^bb14
  ^bb10:
    cf.br ^bb11(%2 : index)
  ^bb11(%15: index):
    %16 = arith.cmpi slt, %15, %10 : index
    cf.cond_br %16, ^bb12, ^bb13
  ^bb12:
    %17 = memref.load %x[%11, %15] : memref<4x8xf32>
    %18 = memref.load %w[%15, %13] : memref<8x16xf32>
    %19 = memref.load %acc[%11, %13] : memref<4x16xf32>
    %20 = arith.mulf %17, %18 : f32
    %21 = arith.addf %20, %19 : f32
    memref.store %21, %acc[%11, %13] : memref<4x16xf32>
    %22 = arith.addi %15, %3 : index
    cf.br ^bb11(%22 : index)
  ^bb13:
    %23 = arith.addi %13, %3 : index
    cf.br ^bb9(%23 : index)
  ^bb14:
    %24 = arith.addi %11, %3 : index
    cf.br ^bb7(%24 : index)
  ^bb15:
    cf.br ^bb16(%2 : index)
  ^bb16(%25: index):
    %26 = arith.cmpi slt, %25, %0 : index
    cf.cond_br %26, ^bb17, ^bb21
  ^bb17:
    cf.br ^bb18(%2 : index)
  ^bb18(%27: index):
    %28 = arith.cmpi slt, %27, %1 : index
    cf.cond_br %28, ^bb19, ^bb20
  ^bb19:
    %v = memref.load %acc[%25, %27] : memref<4x16xf32>
    %bias = memref.load %b[%27] : memref<16xf32>
    %sum = arith.addf %v, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    %scaled = arith.addf %relu, %relu : f32
    memref.store %scaled, %y[%25, %27] : memref<4x16xf32>
    %29 = arith.addi %27, %3 : index
    cf.br ^bb18(%29 : index)
  ^bb20:
    %30 = arith.addi %25, %3 : index
    cf.br ^bb16(%30 : index)
  ^bb21:
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}

°
CanonicalizePassåbuiltin.module {
  func.func @main(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>) -> memref<4x16xf32> {
    %zero = arith.constant 0.000000e+00 : f32
    %acc = memref.alloc() : memref<4x16xf32>
    %y = memref.alloc() : memref<4x16xf32>
    %0 = arith.constant 4 : index
    %1 = arith.constant 16 : index
    %2 = arith.constant 0 : index
    %3 = arith.constant 1 : index
    cf.br ^bb1(%2 : index)
  ^bb1(%4: index):
    %5 = arith.cmpi slt, %4, %0 : index
    cf.cond_br %5, ^bb2(%2 : index), ^bb5
  ^bb2(%6: index):
    %7 = arith.cmpi slt, %6, %1 : index
    cf.cond_br %7, ^bb3, ^bb4
  ^bb3:
    memref.store %zero, %acc[%4, %6] : memref<4x16xf32>
    %8 = arith.addi %6, %3 : index
    cf.br ^bb2(%8 : index)
  ^bb4:
    %9 = arith.addi %4, %3 : index
    cf.br ^bb1(%9 : index)
  ^bb5:
    %10 = arith.constant 8 : index
    cf.br ^bb6(%2 : index)
  ^bb6(%11: index):
    %12 = arith.cmpi slt, %11, %0 : index
    cf.cond_br %12, ^bb7(%2 : index), ^bb12(%2 : index)
  ^bb7(%13: index):
    %14 = arith.cmpi slt, %13, %1 : index
    cf.cond_br %14, ^bb8(%2 : index), ^bb11
  ^bb8(%15: index):
    %16 = arith.cmpi slt, %15, %10 : index
    cf.cond_br %16, ^bb9, ^bb10
  ^bb9:
    %17 = memref.load %x[%11, %15] : memref<4x8xf32>
    %18 = memref.load %w[%15, %13] : memref<8x16xf32>
    %19 = memref.load %acc[%11, %13] : memref<4x16xf32>
    %20 = arith.mulf %17, %18 : f32
    %21 = arith.addf %20, %19 : f32
    memref.store %21, %acc[%11, %13] : memref<4x16xf32>
    %22 = arith.addi %15, %3 : index
    cf.br ^bb8(%22 : index)
  ^bb10:
    %23 = arith.addi %13, %3 : index
    cf.br ^bb7(%23 : index)
  ^bb11:
    %24 = arith.addi %11, %3 : index
    cf.br ^bb6(%24 : index)
  ^bb12(%25: index):
    %26 = arith.cmpi slt, %25, %0 : index
    cf.cond_br %26, ^bb13(%2 : index), ^bb16
  ^bb13(%27: index):
    %28 = arith.cmpi slt, %27, %1 : index
    cf.cond_br %28, ^bb14, ^bb15
  ^bb14:
    %v = memref.load %acc[%25, %27] : memref<4x16xf32>
    %bias = memref.load %b[%27] : memref<16xf32>
    %sum = arith.addf %v, %bias : f32
    %relu = arith.maximumf %sum, %zero : f32
    %scaled = arith.addf %relu, %relu : f32
    memref.store %scaled, %y[%25, %27] : memref<4x16xf32>
    %29 = arith.addi %27, %3 : index
    cf.br ^bb13(%29 : index)
  ^bb15:
    %30 = arith.addi %25, %3 : index
    cf.br ^bb12(%30 : index)
  ^bb16:
    memref.dealloc %acc : memref<4x16xf32>
    func.return %y : memref<4x16xf32>
  }
}
