// RUN: kina-opt %s --kina-tile-transposes --split-input-file | FileCheck %s

// A transpose that moves the last dim, by 32 x 32 blocks.
// CHECK-LABEL: func.func @matrix
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: linalg.transpose ins(%{{.*}} : tensor<32x32xf32>) outs(%{{.*}} : tensor<32x32xf32>) permutation = [1, 0]
func.func @matrix(%a: tensor<64x96xf32>) -> tensor<96x64xf32> {
  %e = tensor.empty() : tensor<96x64xf32>
  %t = linalg.transpose ins(%a : tensor<64x96xf32>) outs(%e : tensor<96x64xf32>) permutation = [1, 0]
  return %t : tensor<96x64xf32>
}

// -----

// Keys transposed for attention, [T, H, Dh] -> [H, Dh, T]: blocks along T
// (the output's last dim) and Dh (which reads the input's last), one head
// at a time.
// CHECK-LABEL: func.func @keys
// CHECK: linalg.transpose ins(%{{.*}} : tensor<32x1x32xf32>) outs(%{{.*}} : tensor<1x32x32xf32>) permutation = [1, 2, 0]
func.func @keys(%k: tensor<128x4x64xf32>) -> tensor<4x64x128xf32> {
  %e = tensor.empty() : tensor<4x64x128xf32>
  %t = linalg.transpose ins(%k : tensor<128x4x64xf32>) outs(%e : tensor<4x64x128xf32>) permutation = [1, 2, 0]
  return %t : tensor<4x64x128xf32>
}

// -----

// Left alone: the last dim stays in place (rows copied whole), or the
// transpose is one block already.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.for
// CHECK: linalg.transpose ins(%{{.*}} : tensor<128x4x64xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<16x32xf32>)
func.func @left_alone(%a: tensor<128x4x64xf32>, %b: tensor<16x32xf32>) -> (tensor<4x128x64xf32>, tensor<32x16xf32>) {
  %e = tensor.empty() : tensor<4x128x64xf32>
  %t = linalg.transpose ins(%a : tensor<128x4x64xf32>) outs(%e : tensor<4x128x64xf32>) permutation = [1, 0, 2]
  %f = tensor.empty() : tensor<32x16xf32>
  %u = linalg.transpose ins(%b : tensor<16x32xf32>) outs(%f : tensor<32x16xf32>) permutation = [1, 0]
  return %t, %u : tensor<4x128x64xf32>, tensor<32x16xf32>
}
