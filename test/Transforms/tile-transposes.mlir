// RUN: kina-opt %s --kina-tile-transposes --split-input-file | FileCheck %s
// RUN: kina-opt %s --kina-tile-transposes=register-side=16 --split-input-file | FileCheck %s --check-prefix=AVX512
// RUN: kina-opt %s --kina-tile-transposes=register-side=8 --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: not kina-opt %s --kina-tile-transposes=register-side=5 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: option 'register-side' must be 0, 8 or 16, got 5

// A transpose that moves the last dim, by 32 x 32 blocks.
// CHECK-LABEL: func.func @matrix
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: linalg.transpose ins(%{{.*}} : tensor<32x32xf32>) outs(%{{.*}} : tensor<32x32xf32>) permutation = [1, 0]
// In registers, each block by 16 x 16 (AVX-512) or 8 x 8 (AVX2): the
// input's rows read whole, shuffled, the output's rows written whole.
// AVX512-LABEL: func.func @matrix
// AVX512-COUNT-2: scf.for
// AVX512: %[[BLOCK:.*]] = tensor.extract_slice %{{.*}} [32, 32] [1, 1] : tensor<64x96xf32> to tensor<32x32xf32>
// AVX512-COUNT-2: scf.for
// AVX512: %[[IN:.*]] = tensor.extract_slice %[[BLOCK]][%{{.*}}, %{{.*}}] [16, 16] [1, 1]
// AVX512: %[[ROWS:.*]] = vector.transfer_read %[[IN]][%{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true, true]} : tensor<16x16xf32>, vector<16x16xf32>
// AVX512-NOT: vector.transpose
// AVX512-COUNT-64: vector.shuffle
// AVX512-NOT: vector.transpose
// AVX512: vector.transfer_write %{{.*}} {in_bounds = [true, true]} : vector<16x16xf32>, tensor<16x16xf32>
// AVX2-LABEL: func.func @matrix
// AVX2: vector.transfer_read %{{.*}} : tensor<8x8xf32>, vector<8x8xf32>
// AVX2-COUNT-8: vblendps
// AVX2-NOT: vector.transpose
// AVX2: vector.transfer_write %{{.*}} : vector<8x8xf32>, tensor<8x8xf32>
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
// AVX512-LABEL: func.func @keys
// AVX512: vector.transfer_read %{{.*}} : tensor<16x1x16xf32>, vector<16x1x16xf32>
// AVX512-NOT: vector.transpose
// AVX512: vector.transfer_write %{{.*}} : vector<1x16x16xf32>, tensor<1x16x16xf32>
// AVX2-LABEL: func.func @keys
// AVX2: vector.transfer_read %{{.*}} : tensor<8x1x8xf32>, vector<8x1x8xf32>
// AVX2: vector.transfer_write %{{.*}} : vector<1x8x8xf32>, tensor<1x8x8xf32>
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

// -----

// Blocks of 32 but not in registers: 64-bit elements (the shuffles are of
// 32-bit lanes), and sides the register side does not divide (40 by 16);
// where it does (40 by 8), blocks of 8 x 32 (40 = 5 x 8), none partial.
// AVX512-LABEL: func.func @not_in_registers
// AVX512-NOT: vector.transfer_read
// AVX512: linalg.transpose ins(%{{.*}} : tensor<32x32xi64>)
// AVX512-NOT: vector.transfer_read
// AVX512: linalg.transpose ins(%{{.*}} : tensor<{{.*}}xf32>)
// AVX512-NOT: vector.transfer_read
// AVX2-LABEL: func.func @not_in_registers
// AVX2: linalg.transpose ins(%{{.*}} : tensor<32x32xi64>)
// AVX2: tensor.extract_slice %{{.*}} [8, 32] [1, 1] : tensor<40x96xf32> to tensor<8x32xf32>
// AVX2: vector.transfer_read %{{.*}} : tensor<8x8xf32>, vector<8x8xf32>
func.func @not_in_registers(%a: tensor<64x96xi64>, %b: tensor<40x96xf32>) -> (tensor<96x64xi64>, tensor<96x40xf32>) {
  %e = tensor.empty() : tensor<96x64xi64>
  %t = linalg.transpose ins(%a : tensor<64x96xi64>) outs(%e : tensor<96x64xi64>) permutation = [1, 0]
  %f = tensor.empty() : tensor<96x40xf32>
  %u = linalg.transpose ins(%b : tensor<40x96xf32>) outs(%f : tensor<96x40xf32>) permutation = [1, 0]
  return %t, %u : tensor<96x64xi64>, tensor<96x40xf32>
}
