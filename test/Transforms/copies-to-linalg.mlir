// RUN: kina-opt %s --kina-copies-to-linalg | FileCheck %s --implicit-check-not=memref.copy

// A copy between non-contiguous memrefs would lower to a call into MLIR's
// C runner library; as linalg.copy it lowers to loops.
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[A:[^:]*]]: memref<4x4xf32, strided<[8, 1]>>, %[[B:[^:]*]]: memref<4x4xf32>)
// CHECK: linalg.copy ins(%[[A]] : memref<4x4xf32, strided<[8, 1]>>) outs(%[[B]] : memref<4x4xf32>)
func.func @strided(%a: memref<4x4xf32, strided<[8, 1]>>, %b: memref<4x4xf32>) {
  memref.copy %a, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// Copies inside loops and of any rank are rewritten alike.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for
// CHECK: linalg.copy ins(%{{.*}} : memref<f32>) outs(%{{.*}} : memref<f32>)
func.func @nested(%a: memref<f32>, %b: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.copy %a, %b : memref<f32> to memref<f32>
  }
  return
}
