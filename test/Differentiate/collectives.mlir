// RUN: kina-opt %s --kina-differentiate --split-input-file | FileCheck %s
// The transposes of the explicit collectives of a propagated (global-view)
// program, JAX's rules: each collective is the identity on the global
// value, so its adjoint moves the cotangent back to the input's placement,
// and a partial input's cotangent is replicated. No rule adds an
// all-reduce.

// all_gather -> each device keeps its block (all_slice, no traffic).
// CHECK-LABEL: func.func @gather_grad
// CHECK: kina.all_gather %arg0[axis = 1, over = "x"]
// CHECK: %[[D:.*]] = kina.all_slice %arg1[axis = 1, over = "x"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
// CHECK-NOT: kina.all_reduce
// CHECK: return %{{.*}}, %[[D]]
kina.mesh @mesh [x = 2]
func.func @gather(%a: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @replicated> {
  %g = kina.all_gather %a [axis = 1, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<4x8xf32, @replicated>
  return %g : !kina.tensor<4x8xf32, @replicated>
}
func.func @gather_grad(%a: !kina.tensor<4x8xf32, @sharded(axis=1)>, %c: !kina.tensor<4x8xf32, @replicated>) -> (!kina.tensor<4x8xf32, @replicated>, !kina.tensor<4x8xf32, @sharded(axis=1)>) {
  %v, %d = kina.reverse_mode @gather(%a, %c) wrt = [0] : (!kina.tensor<4x8xf32, @sharded(axis=1)>, !kina.tensor<4x8xf32, @replicated>) -> (!kina.tensor<4x8xf32, @replicated>, !kina.tensor<4x8xf32, @sharded(axis=1)>)
  return %v, %d : !kina.tensor<4x8xf32, @replicated>, !kina.tensor<4x8xf32, @sharded(axis=1)>
}

// -----

// all_slice and reduce_scatter -> all_gather; all_to_all -> the all_to_all
// back.
// CHECK-LABEL: func.func @moves_grad
// CHECK: %[[S:.*]] = kina.all_slice %arg0[axis = 0, over = "x"]
// CHECK: %[[T:.*]] = kina.all_to_all %[[S]][from = 0, to = 1, over = "x"]
// CHECK: %[[B:.*]] = kina.all_to_all %arg1[from = 1, to = 0, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<4x8xf32, @sharded(axis=0)>
// CHECK: %[[G:.*]] = kina.all_gather %[[B]][axis = 0, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=0)> -> !kina.tensor<4x8xf32, @replicated>
// CHECK: return %[[T]], %[[G]]
kina.mesh @mesh [x = 2]
func.func @moves(%a: !kina.tensor<4x8xf32, @replicated>) -> !kina.tensor<4x8xf32, @sharded(axis=1)> {
  %s = kina.all_slice %a [axis = 0, over = "x"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=0)>
  %t = kina.all_to_all %s [from = 0, to = 1, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=0)> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
  return %t : !kina.tensor<4x8xf32, @sharded(axis=1)>
}
func.func @moves_grad(%a: !kina.tensor<4x8xf32, @replicated>, %c: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> (!kina.tensor<4x8xf32, @sharded(axis=1)>, !kina.tensor<4x8xf32, @replicated>) {
  %v, %d = kina.reverse_mode @moves(%a, %c) wrt = [0] : (!kina.tensor<4x8xf32, @replicated>, !kina.tensor<4x8xf32, @sharded(axis=1)>) -> (!kina.tensor<4x8xf32, @sharded(axis=1)>, !kina.tensor<4x8xf32, @replicated>)
  return %v, %d : !kina.tensor<4x8xf32, @sharded(axis=1)>, !kina.tensor<4x8xf32, @replicated>
}

// -----

// A row-parallel product, reduced two ways: all_reduce -> a free cast (the
// summands' cotangent is the replicated one) and reduce_scatter ->
// all_gather; the split operands' gradients stay split, and the backward
// all-reduces nothing.
// CHECK-LABEL: func.func @rows_grad
// CHECK: kina.all_reduce
// CHECK: kina.reduce_scatter
// CHECK-NOT: kina.all_reduce
// CHECK-DAG: %[[G1:.*]] = kina.all_gather %arg2[axis = 0, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=0)> -> !kina.tensor<4x8xf32, @replicated>
// CHECK-DAG: %[[G2:.*]] = kina.all_gather %arg2[axis = 0, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=0)> -> !kina.tensor<4x8xf32, @replicated>
// CHECK: kina.add %[[G1]], %[[G2]]
// CHECK-NOT: kina.all_reduce
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : !kina.tensor<4x8xf32, @sharded(axis=0)>, !kina.tensor<4x16xf32, @sharded(axis=1)>, !kina.tensor<16x8xf32, @sharded(axis=0)>
kina.mesh @mesh [x = 2]
func.func @rows(%h: !kina.tensor<4x16xf32, @sharded(axis=1)>, %w: !kina.tensor<16x8xf32, @sharded(axis=0)>) -> !kina.tensor<4x8xf32, @sharded(axis=0)> {
  %p = kina.matmul %h, %w : (!kina.tensor<4x16xf32, @sharded(axis=1)>, !kina.tensor<16x8xf32, @sharded(axis=0)>) -> !kina.tensor<4x8xf32, @partial>
  %r = kina.all_reduce %p [kind = sum, over = "x"] : !kina.tensor<4x8xf32, @partial> -> !kina.tensor<4x8xf32, @replicated>
  %s = kina.all_slice %r [axis = 0, over = "x"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=0)>
  %q = kina.reduce_scatter %p [axis = 0, over = "x"] : !kina.tensor<4x8xf32, @partial> -> !kina.tensor<4x8xf32, @sharded(axis=0)>
  %y = kina.add %q, %s : !kina.tensor<4x8xf32, @sharded(axis=0)>
  return %y : !kina.tensor<4x8xf32, @sharded(axis=0)>
}
func.func @rows_grad(%h: !kina.tensor<4x16xf32, @sharded(axis=1)>, %w: !kina.tensor<16x8xf32, @sharded(axis=0)>, %c: !kina.tensor<4x8xf32, @sharded(axis=0)>) -> (!kina.tensor<4x8xf32, @sharded(axis=0)>, !kina.tensor<4x16xf32, @sharded(axis=1)>, !kina.tensor<16x8xf32, @sharded(axis=0)>) {
  %v, %dh, %dw = kina.reverse_mode @rows(%h, %w, %c) wrt = [0, 1] : (!kina.tensor<4x16xf32, @sharded(axis=1)>, !kina.tensor<16x8xf32, @sharded(axis=0)>, !kina.tensor<4x8xf32, @sharded(axis=0)>) -> (!kina.tensor<4x8xf32, @sharded(axis=0)>, !kina.tensor<4x16xf32, @sharded(axis=1)>, !kina.tensor<16x8xf32, @sharded(axis=0)>)
  return %v, %dh, %dw : !kina.tensor<4x8xf32, @sharded(axis=0)>, !kina.tensor<4x16xf32, @sharded(axis=1)>, !kina.tensor<16x8xf32, @sharded(axis=0)>
}
