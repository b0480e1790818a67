// RUN: kina-opt %s | kina-opt | FileCheck %s
// RUN: kina-opt %s --mlir-print-op-generic | kina-opt | FileCheck %s

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%lm: !kina.tensor<4x8xf32, @host>, %ids: !kina.tensor<1x4xi64, @host>, %embed: !kina.tensor<8x4xf32, @host>) -> !kina.tensor<1x4x4xf32, @host> {
  // CHECK: %[[S:.*]] = kina.slice %{{.*}}[axis = 1, start = 0, stop = 4] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %0 = kina.slice %lm [axis = 1, start = 0, stop = 4] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %1 = kina.slice %lm [axis = 1, start = 4, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  // CHECK: kina.concat %[[S]], %{{.*}}[axis = 0] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<8x4xf32, @host>
  %2 = kina.concat %0, %1[axis = 0] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<8x4xf32, @host>
  // CHECK: kina.gather %{{.*}}[%{{.*}}] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host>
  %3 = kina.gather %2 [%ids] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host>
  // CHECK: kina.scatter_add %{{.*}}[%{{.*}}] [rows = 8] : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<8x4xf32, @host>
  %grad = kina.scatter_add %3 [%ids] [rows = 8] : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<8x4xf32, @host>
  // CHECK: kina.reshape %{{.*}} to [1, 4, 2, 2] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
  %4 = kina.reshape %3 to [1, 4, 2, 2] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
  // CHECK: kina.transpose %{{.*}} perm [0, 2, 1, 3] : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x2x4x2xf32, @host>
  %5 = kina.transpose %4 perm [0, 2, 1, 3] : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x2x4x2xf32, @host>
  %6 = kina.transpose %5 perm [0, 2, 1, 3] : !kina.tensor<1x2x4x2xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
  %7 = kina.reshape %6 to [1, 4, 4] : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  return %7 : !kina.tensor<1x4x4xf32, @host>
}

// CHECK-LABEL: func.func @compute
func.func @compute(%x: !kina.tensor<1x4x4xf32, @host>, %w: !kina.tensor<4x8xf32, @host>, %scale: !kina.tensor<f32, @host>, %i: !kina.tensor<3xi32, @host>) -> !kina.tensor<1x4x8xf32, @host> {
  // CHECK: kina.broadcast %{{.*}} to [1, 4, 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<1x4x8xf32, @host>
  %wb = kina.broadcast %w to [1, 4, 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.matmul %{{.*}}, %{{.*}} : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host>
  %z = kina.matmul %x, %wb : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.constant 5.000000e-01 : !kina.tensor<f32, @host>
  %c = kina.constant 5.0e-01 : !kina.tensor<f32, @host>
  %cb = kina.broadcast %c to [1, 4, 8] : !kina.tensor<f32, @host> -> !kina.tensor<1x4x8xf32, @host>
  %sb = kina.broadcast %scale to [1, 4, 8] : !kina.tensor<f32, @host> -> !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.add %{{.*}}, %{{.*}} : !kina.tensor<1x4x8xf32, @host>
  %a = kina.add %z, %cb : !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.sub
  %s = kina.sub %a, %sb : !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.mul
  %m = kina.mul %s, %sb : !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.div
  %d = kina.div %m, %sb : !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.neg %{{.*}} : !kina.tensor<1x4x8xf32, @host>
  %n = kina.neg %d : !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.softmax %{{.*}}[axis = 2] : !kina.tensor<1x4x8xf32, @host>
  %p = kina.softmax %n [axis = 2] : !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.add %{{.*}}, %{{.*}} : !kina.tensor<3xi32, @host>
  %ii = kina.add %i, %i : !kina.tensor<3xi32, @host>
  return %p : !kina.tensor<1x4x8xf32, @host>
}

// Reductions keep their axis with size 1; math ops keep the shape.
// CHECK-LABEL: func.func @reductions_and_math
func.func @reductions_and_math(%x: !kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x1xf32, @host> {
  // CHECK: %[[S:.*]] = kina.sum %{{.*}}[axis = 2] : (!kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x1xf32, @host>
  %s = kina.sum %x [axis = 2] : (!kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x1xf32, @host>
  // CHECK: kina.mean %{{.*}}[axis = 0] : !kina.tensor<1x4x8xf32, @host>
  %m = kina.mean %x [axis = 0] : (!kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host>
  // CHECK: kina.max %{{.*}}[axis = 1] : (!kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x1x8xf32, @host>
  %x1 = kina.max %m [axis = 1] : (!kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x1x8xf32, @host>
  // CHECK: kina.exp %[[S]] : !kina.tensor<1x4x1xf32, @host>
  %e = kina.exp %s : !kina.tensor<1x4x1xf32, @host>
  // CHECK: kina.log
  %l = kina.log %e : !kina.tensor<1x4x1xf32, @host>
  // CHECK: kina.sqrt
  %q = kina.sqrt %l : !kina.tensor<1x4x1xf32, @host>
  // CHECK: kina.rsqrt
  %r = kina.rsqrt %q : !kina.tensor<1x4x1xf32, @host>
  // CHECK: kina.tanh
  %t = kina.tanh %r : !kina.tensor<1x4x1xf32, @host>
  return %t : !kina.tensor<1x4x1xf32, @host>
}

// CHECK-LABEL: func.func @rank4_batched
func.func @rank4_batched(%q: !kina.tensor<1x2x4x2xf32, @host>, %k: !kina.tensor<1x2x2x4xf32, @host>) -> !kina.tensor<1x2x4x4xf32, @host> {
  // CHECK: kina.matmul {{.*}} -> !kina.tensor<1x2x4x4xf32, @host>
  %s = kina.matmul %q, %k : (!kina.tensor<1x2x4x2xf32, @host>, !kina.tensor<1x2x2x4xf32, @host>) -> !kina.tensor<1x2x4x4xf32, @host>
  return %s : !kina.tensor<1x2x4x4xf32, @host>
}
