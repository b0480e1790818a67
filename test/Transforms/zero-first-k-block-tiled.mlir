// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=6 tile-n=16 cache-m=64 cache-n=256 cache-k=128}),canonicalize,loop-invariant-subset-hoisting,canonicalize,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,func.func(kina-prefetch-packed-rows,kina-prefetch-next-block,kina-zero-first-k-block))' --split-input-file | FileCheck %s

// The loops of kina-tile-matmuls as the pipeline leaves them: the fill
// goes, its reads derived from the loops. K in two blocks, M tiles of 64
// rows as register tiles of 60 and 4: the first K block starts from zeros.
// CHECK-LABEL: func.func @k_blocks
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[K:[^ ]*]] =
// CHECK: arith.cmpi eq, %[[K]]
// CHECK: scf.if
// CHECK: vector.broadcast
func.func @k_blocks(%a: tensor<128x256xf32>, %b: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%c : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// K is one block: every read of the result is the fill value.
// CHECK-LABEL: func.func @one_k_block
// CHECK-NOT: linalg.fill
// CHECK-NOT: scf.if
// CHECK: vector.broadcast
func.func @one_k_block(%a: tensor<128x128xf32>, %b: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x64xf32>) outs(%c : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// Column panels in parallel, each zeroed by its thread: the panel's fill
// goes the same way.
// CHECK-LABEL: func.func @panels
// CHECK: scf.forall
// CHECK-NOT: linalg.fill
// CHECK: scf.if
func.func @panels(%a: tensor<128x256xf32>, %b: tensor<256x256xf32>) -> tensor<128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x256xf32>) -> tensor<128x256xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x256xf32>) outs(%c : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %0 : tensor<128x256xf32>
}
