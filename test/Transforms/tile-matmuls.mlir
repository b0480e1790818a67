// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls),canonicalize,loop-invariant-subset-hoisting,canonicalize)' --split-input-file | FileCheck %s

// M = 16, N = 64: cache tiles (16 x 64 x 8 here) and 8 x 32 register tiles;
// the accumulator is carried through the K loop as a vector, and each K
// step is 8 FMAs of 32 lanes.
// CHECK-LABEL: func.func @tiled
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.matmul
func.func @tiled(%a: tensor<16x40xf32>, %b: tensor<40x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x40xf32>, tensor<40x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// Shapes the register tile does not divide keep the plain matmul.
// CHECK-LABEL: func.func @untiled
// CHECK-NOT: scf.for
// CHECK: linalg.matmul
func.func @untiled(%a: tensor<4x4xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
