// RUN: kina-opt %s --kina-differentiate --split-input-file | FileCheck %s
// RUN: kina-opt %s --kina-differentiate --split-input-file -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// The adjoint of each op family, from its own rule: no kina.reverse_mode
// is left, and every adjoint op carries its forward op's location.

// matmul: d lhs = c @ rhs^T, d rhs = lhs^T @ c; the seed of a rank-0
// result is 1.
// CHECK-LABEL: func.func @matmul_grad
// CHECK-NOT: kina.reverse_mode
// CHECK: %[[Y:.*]] = kina.matmul %arg0, %arg1
// CHECK: %[[ONE:.*]] = kina.constant 1.000000e+00
// CHECK-DAG: %[[WT:.*]] = kina.transpose %arg1 perm [1, 0]
// CHECK-DAG: %[[XT:.*]] = kina.transpose %arg0 perm [1, 0]
// CHECK-DAG: %[[DX:.*]] = kina.matmul %{{.*}}, %[[WT]]
// CHECK-DAG: %[[DW:.*]] = kina.matmul %[[XT]], %{{.*}}
// CHECK: return %{{.*}}, %[[DW]], %[[DX]]
func.func @f(%x: !kina.tensor<4x8xf32, @host>, %w: !kina.tensor<8x2xf32, @host>) -> !kina.tensor<f32, @host> {
  %y = kina.matmul %x, %w : (!kina.tensor<4x8xf32, @host>, !kina.tensor<8x2xf32, @host>) -> !kina.tensor<4x2xf32, @host>
  %r = kina.reshape %y to [8] : !kina.tensor<4x2xf32, @host> -> !kina.tensor<8xf32, @host>
  %s = kina.sum %r [axis = 0] : (!kina.tensor<8xf32, @host>) -> !kina.tensor<1xf32, @host>
  %v = kina.reshape %s to [] : !kina.tensor<1xf32, @host> -> !kina.tensor<f32, @host>
  return %v : !kina.tensor<f32, @host>
}
func.func @matmul_grad(%x: !kina.tensor<4x8xf32, @host>, %w: !kina.tensor<8x2xf32, @host>) -> (!kina.tensor<f32, @host>, !kina.tensor<8x2xf32, @host>, !kina.tensor<4x8xf32, @host>) {
  %v, %dw, %dx = kina.reverse_mode @f(%x, %w) wrt = [1, 0] : (!kina.tensor<4x8xf32, @host>, !kina.tensor<8x2xf32, @host>) -> (!kina.tensor<f32, @host>, !kina.tensor<8x2xf32, @host>, !kina.tensor<4x8xf32, @host>)
  return %v, %dw, %dx : !kina.tensor<f32, @host>, !kina.tensor<8x2xf32, @host>, !kina.tensor<4x8xf32, @host>
}

// -----

// gather: a scatter-add of the cotangent's rows into the table's rows at
// the ids; nothing for the ids.
// CHECK-LABEL: func.func @gather_grad
// CHECK: %[[SUM:.*]] = kina.scatter_add %arg2[%arg1] [rows = 5] : (!kina.tensor<1x3x2xf32, @host>, !kina.tensor<1x3xi64, @host>) -> !kina.tensor<5x2xf32, @host>
// CHECK-NOT: kina.one_hot
// CHECK: return %{{.*}}, %[[SUM]]
func.func @g(%t: !kina.tensor<5x2xf32, @host>, %ids: !kina.tensor<1x3xi64, @host>) -> !kina.tensor<1x3x2xf32, @host> {
  %r = kina.gather %t[%ids] : (!kina.tensor<5x2xf32, @host>, !kina.tensor<1x3xi64, @host>) -> !kina.tensor<1x3x2xf32, @host>
  return %r : !kina.tensor<1x3x2xf32, @host>
}
func.func @gather_grad(%t: !kina.tensor<5x2xf32, @host>, %ids: !kina.tensor<1x3xi64, @host>, %seed: !kina.tensor<1x3x2xf32, @host>) -> (!kina.tensor<1x3x2xf32, @host>, !kina.tensor<5x2xf32, @host>) {
  %v, %dt = kina.reverse_mode @g(%t, %ids, %seed) wrt = [0] : (!kina.tensor<5x2xf32, @host>, !kina.tensor<1x3xi64, @host>, !kina.tensor<1x3x2xf32, @host>) -> (!kina.tensor<1x3x2xf32, @host>, !kina.tensor<5x2xf32, @host>)
  return %v, %dt : !kina.tensor<1x3x2xf32, @host>, !kina.tensor<5x2xf32, @host>
}

// -----

// max: the elements equal to the maximum share the cotangent.
// CHECK-LABEL: func.func @max_grad
// CHECK: %[[M:.*]] = kina.max %arg0[axis = 1]
// CHECK: %[[B:.*]] = kina.broadcast %[[M]] to [2, 3]
// CHECK: %[[TIES:.*]] = kina.equal %arg0, %[[B]]
// CHECK: %[[COUNT:.*]] = kina.sum %[[TIES]][axis = 1]
// CHECK: %[[SHARE:.*]] = kina.div %arg1, %[[COUNT]]
// CHECK: %[[S:.*]] = kina.broadcast %[[SHARE]] to [2, 3]
// CHECK: %[[D:.*]] = kina.mul %[[TIES]], %[[S]]
// CHECK: return %[[M]], %[[D]]
func.func @m(%x: !kina.tensor<2x3xf32, @host>) -> !kina.tensor<2x1xf32, @host> {
  %m = kina.max %x [axis = 1] : (!kina.tensor<2x3xf32, @host>) -> !kina.tensor<2x1xf32, @host>
  return %m : !kina.tensor<2x1xf32, @host>
}
func.func @max_grad(%x: !kina.tensor<2x3xf32, @host>, %seed: !kina.tensor<2x1xf32, @host>) -> (!kina.tensor<2x1xf32, @host>, !kina.tensor<2x3xf32, @host>) {
  %v, %d = kina.reverse_mode @m(%x, %seed) wrt = [0] : (!kina.tensor<2x3xf32, @host>, !kina.tensor<2x1xf32, @host>) -> (!kina.tensor<2x1xf32, @host>, !kina.tensor<2x3xf32, @host>)
  return %v, %d : !kina.tensor<2x1xf32, @host>, !kina.tensor<2x3xf32, @host>
}

// -----

// slice: zeros around the cotangent; a value used twice adds its
// cotangents; the adjoint ops are located at the forward op's line.
// CHECK-LABEL: func.func @slice_grad
// CHECK: %[[SUM:.*]] = kina.add %arg1, %arg1
// CHECK: %[[Z:.*]] = kina.broadcast %{{.*}} to [1, 2]
// CHECK: %[[PAD:.*]] = kina.concat %[[Z]], %[[SUM]], %{{.*}}[axis = 1]
// CHECK: return %{{.*}}, %[[PAD]]
// LOC-LABEL: func.func @slice_grad
// LOC: kina.concat {{.*}} loc(#[[ADJ:loc[0-9]*]])
// LOC: #[[FWD:loc[0-9]*]] = loc("slice.mlir":7:3)
// LOC: #[[ADJ]] = loc("adjoint of kina.slice"(#[[FWD]]))
func.func @s(%x: !kina.tensor<1x6xf32, @host>) -> !kina.tensor<1x3xf32, @host> {
  %s = kina.slice %x [axis = 1, start = 2, stop = 5] : !kina.tensor<1x6xf32, @host> -> !kina.tensor<1x3xf32, @host> loc("slice.mlir":7:3)
  %t = kina.add %s, %s : !kina.tensor<1x3xf32, @host>
  return %t : !kina.tensor<1x3xf32, @host>
}
func.func @slice_grad(%x: !kina.tensor<1x6xf32, @host>, %seed: !kina.tensor<1x3xf32, @host>) -> (!kina.tensor<1x3xf32, @host>, !kina.tensor<1x6xf32, @host>) {
  %v, %d = kina.reverse_mode @s(%x, %seed) wrt = [0] : (!kina.tensor<1x6xf32, @host>, !kina.tensor<1x3xf32, @host>) -> (!kina.tensor<1x3xf32, @host>, !kina.tensor<1x6xf32, @host>)
  return %v, %d : !kina.tensor<1x3xf32, @host>, !kina.tensor<1x6xf32, @host>
}

