// RUN: kina-opt %s --kina-outline-parallel-loops | FileCheck %s

// Each outermost forall becomes a private function over a range of its
// iterations and a call over all of them. A dense static memref passes as
// it is; a strided one as base buffer plus its dynamic offset, rebuilt
// inside; constants are rematerialized, not passed.
// CHECK-LABEL: func.func private @panels_parallel
// CHECK-SAME: (%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[A:.*]]: memref<16x64xf32>, %[[BASE:.*]]: memref<f32>, %[[OFF:.*]]: index, %[[S:.*]]: f32)
// CHECK-SAME: attributes {kina.parallel_body}
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [16, 64], strides: [128, 1]
// CHECK: scf.for %[[T:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: %[[J:.*]] = arith.muli %[[T]], %[[C16:[^ ]*]]
// CHECK: memref.subview %[[B]][0, %[[J]]] [16, 16]
// CHECK: linalg.fill ins(%[[S]] : f32)
// The call covers all 4 iterations (64 / 16).
// CHECK-LABEL: func.func @panels
// CHECK-SAME: (%[[PA:[^:]*]]: memref<16x64xf32>, %[[WHOLE:[^:]*]]: memref<16x128xf32>, %{{[^:]*}}: index, %[[PS:[^:]*]]: f32)
// CHECK: %[[SUB:.*]] = memref.subview %[[WHOLE]]
// CHECK: %[[META:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[SUB]]
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: call @panels_parallel(%[[ZERO]], %[[FOUR]], %[[PA]], %[[META]], %[[OFFSET]], %[[PS]])
// CHECK-NOT: scf.forall
func.func @panels(%a: memref<16x64xf32>, %whole: memref<16x128xf32>, %at: index, %s: f32) {
  %b = memref.subview %whole[0, %at] [16, 64] [1, 1] : memref<16x128xf32> to memref<16x64xf32, strided<[128, 1], offset: ?>>
  scf.forall (%j) = (0) to (64) step (16) {
    %sa = memref.subview %a[0, %j] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %sb = memref.subview %b[0, %j] [16, 16] [1, 1] : memref<16x64xf32, strided<[128, 1], offset: ?>> to memref<16x16xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%s : f32) outs(%sb : memref<16x16xf32, strided<[128, 1], offset: ?>>)
  }
  return
}

// A 2-d forall is linearized (4 x 3 = 12 iterations); nested foralls stay
// in the body as loops.
// CHECK-LABEL: func.func private @grid_parallel
// CHECK: %[[CST:.*]] = arith.constant 1.0
// CHECK: scf.for %[[T:.*]] =
// CHECK: %[[J:.*]] = arith.remui %[[T]], %[[THREE:[^ ]*]]
// CHECK: %[[I:.*]] = arith.divui %[[T]], %[[THREE]]
// CHECK: scf.forall
// CHECK: memref.store %[[CST]], %{{.*}}[%[[I]], %{{.*}}]
// CHECK-LABEL: func.func @grid
// CHECK-SAME: (%[[GA:[^:]*]]: memref<4x6xf32>)
// CHECK-DAG: %[[GZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[TWELVE:.*]] = arith.constant 12 : index
// CHECK: call @grid_parallel(%[[GZERO]], %[[TWELVE]], %[[GA]])
func.func @grid(%a: memref<4x6xf32>) {
  %c = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (4, 3) {
    scf.forall (%k) in (2) {
      %col = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%j, %k)
      memref.store %c, %a[%i, %col] : memref<4x6xf32>
    }
  }
  return
}
