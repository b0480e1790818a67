// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tuned=16x64x64:4:16:32:16}),canonicalize)' | FileCheck %s

// A `tuned` entry sets the cache and register tiles of the matmuls of its
// shape only. 16 x 64 x 64 (tuned: cache-n 32, cache-k 16, tile-m 4): N
// tiles of 32, K tiles of 16, register tiles of 4 rows. 16 x 64 x 128
// keeps the pass's options: no K loop (K = 64 fits cache-k 256), register
// tiles of 8 rows.
// CHECK-LABEL: func.func @two_shapes
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64]] step %[[C32]] iter_args({{.*}}) -> (tensor<16x64xf32>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64]] step %[[C16]] iter_args({{.*}}) -> (tensor<16x64xf32>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C16]] step %[[C4]]
// CHECK: vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK-NOT: vector<8x32xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32]] iter_args({{.*}}) -> (tensor<16x128xf32>)
// CHECK-NOT: step %[[C16]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C16]] step %[[C8]]
// CHECK: vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK-NOT: vector<4x32xf32>
func.func @two_shapes(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>,
                      %c: tensor<64x128xf32>)
    -> (tensor<16x64xf32>, tensor<16x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r1 = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>)
                      outs(%i1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x128xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x128xf32>) -> tensor<16x128xf32>
  %r2 = linalg.matmul ins(%a, %c : tensor<16x64xf32>, tensor<64x128xf32>)
                      outs(%i2 : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %r1, %r2 : tensor<16x64xf32>, tensor<16x128xf32>
}
