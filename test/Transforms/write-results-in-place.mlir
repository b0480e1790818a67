// RUN: kina-opt %s --kina-write-results-in-place --split-input-file | FileCheck %s

// A result returned as a reshape of a temporary: the temporary becomes the
// out buffer reshaped back, and the copy goes.
// CHECK-LABEL: func.func @reshaped
// CHECK-SAME: %[[OUT:[^:]*]]: memref<1x4x8xf32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<1x4x8xf32> into memref<4x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<4x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
func.func @reshaped(%out: memref<1x4x8xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4x8xf32>)
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 4, 8] : memref<4x8xf32> into memref<1x4x8xf32>
  memref.copy %e, %out : memref<1x4x8xf32> to memref<1x4x8xf32>
  return
}

// -----

// Two reshapes (collapse, then expand), undone in reverse order.
// CHECK-LABEL: func.func @two_reshapes
// CHECK-SAME: %[[OUT:[^:]*]]: memref<2x16xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1]]
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[FLAT]] {{\[}}[0, 1, 2]] output_shape [4, 2, 4]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[VIEW]] : memref<4x2x4xf32>)
// CHECK-NOT: memref.copy
func.func @two_reshapes(%out: memref<2x16xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x2x4xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4x2x4xf32>)
  %flat = memref.collapse_shape %a [[0, 1, 2]] : memref<4x2x4xf32> into memref<32xf32>
  %e = memref.expand_shape %flat [[0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
  memref.copy %e, %out : memref<2x16xf32> to memref<2x16xf32>
  return
}

// -----

// The temporary itself copied out (a caller's result): written in place.
// CHECK-LABEL: func.func @whole
// CHECK-SAME: %[[OUT:[^:]*]]: memref<4x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK-NOT: memref.copy
func.func @whole(%out: memref<4x8xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4x8xf32>)
  memref.copy %a, %out : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// Left alone: the out buffer is read before the copy, the temporary is
// read after it, or the source is an argument, not a temporary.
// CHECK-LABEL: func.func @out_read_before
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func @read_after
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func @not_a_temporary
// CHECK: memref.copy
func.func @out_read_before(%out: memref<4x8xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  memref.copy %out, %a : memref<4x8xf32> to memref<4x8xf32>
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 4, 8] : memref<4x8xf32> into memref<1x4x8xf32>
  %c = memref.collapse_shape %e [[0, 1], [2]] : memref<1x4x8xf32> into memref<4x8xf32>
  memref.copy %c, %out : memref<4x8xf32> to memref<4x8xf32>
  return
}
func.func @read_after(%out: memref<4x8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4x8xf32>)
  memref.copy %a, %out : memref<4x8xf32> to memref<4x8xf32>
  %v = memref.load %a[%c0, %c0] : memref<4x8xf32>
  return %v : f32
}
func.func @not_a_temporary(%in: memref<4x8xf32>, %out: memref<4x8xf32>) {
  memref.copy %in, %out : memref<4x8xf32> to memref<4x8xf32>
  return
}
