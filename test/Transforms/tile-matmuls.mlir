// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=8 tile-n=32}),canonicalize,loop-invariant-subset-hoisting,canonicalize)' --split-input-file | FileCheck %s
// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=4 tile-n=16}),canonicalize,loop-invariant-subset-hoisting,canonicalize)' --split-input-file | FileCheck %s --check-prefix=AVX2

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
// The AVX2 register tile: 4 x 16, 4 FMAs of 16 lanes per K step.
// AVX2-LABEL: func.func @tiled
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4x16xf32>)
// AVX2-COUNT-4: vector.fma {{.*}} : vector<16xf32>
func.func @tiled(%a: tensor<16x40xf32>, %b: tensor<40x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x40xf32>, tensor<40x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// Shapes the register tile does not divide keep the plain matmul.
// CHECK-LABEL: func.func @untiled
// CHECK-NOT: scf.for
// CHECK: linalg.matmul
// AVX2-LABEL: func.func @untiled
// AVX2: linalg.matmul
func.func @untiled(%a: tensor<6x4xf32>, %b: tensor<4x8xf32>, %c: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<6x4xf32>, tensor<4x8xf32>) outs(%c : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// From `parallel-threshold` multiply-adds (default 2^22), the N cache tiles
// are an scf.forall (here 4 panels of 256 columns); below it, all loops
// are serial.
// CHECK-LABEL: func.func @panels
// CHECK: scf.forall (%{{.*}}) = (0) to (1024) step (256)
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: tensor.parallel_insert_slice
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: return
func.func @panels(%a: tensor<64x256xf32>, %b: tensor<256x1024xf32>, %c: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}
func.func @small(%a: tensor<16x256xf32>, %b: tensor<256x512xf32>, %c: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x256xf32>, tensor<256x512xf32>) outs(%c : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %0 : tensor<16x512xf32>
}
