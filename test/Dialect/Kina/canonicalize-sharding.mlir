// RUN: kina-opt %s --canonicalize --split-input-file | FileCheck %s

kina.mesh @mesh [heads = 1, vocab = 2]

// all_slice then all_gather on one axis and mesh axis is the value itself,
// and so is the reverse.
// CHECK-LABEL: func.func @slice_then_gather
// CHECK-SAME: (%[[X:[^:]*]]: !kina.tensor<4x8xf32, @replicated>)
// CHECK-NOT: kina.all_
// CHECK: return %[[X]]
func.func @slice_then_gather(%x: !kina.tensor<4x8xf32, @replicated>) -> !kina.tensor<4x8xf32, @replicated> {
  %s = kina.all_slice %x[axis = 1, over = "vocab"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>
  %g = kina.all_gather %s[axis = 1, over = "vocab"] : !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)> -> !kina.tensor<4x8xf32, @replicated>
  return %g : !kina.tensor<4x8xf32, @replicated>
}

// CHECK-LABEL: func.func @gather_then_slice
// CHECK-SAME: (%[[X:[^:]*]]: !kina.tensor<4x2xf32, @local>)
// CHECK-NOT: kina.all_
// CHECK: return %[[X]]
func.func @gather_then_slice(%x: !kina.tensor<4x2xf32, @local>) -> !kina.tensor<4x2xf32, @local> {
  %g = kina.all_gather %x[axis = 1, over = "vocab"] : !kina.tensor<4x2xf32, @local> -> !kina.tensor<4x4xf32, @local>
  %s = kina.all_slice %g[axis = 1, over = "vocab"] : !kina.tensor<4x4xf32, @local> -> !kina.tensor<4x2xf32, @local>
  return %s : !kina.tensor<4x2xf32, @local>
}

// On another axis they stay.
// CHECK-LABEL: func.func @other_axis
// CHECK: kina.all_gather
// CHECK: kina.all_slice
func.func @other_axis(%x: !kina.tensor<4x2xf32, @local>) -> !kina.tensor<2x4xf32, @local> {
  %g = kina.all_gather %x[axis = 1, over = "vocab"] : !kina.tensor<4x2xf32, @local> -> !kina.tensor<4x4xf32, @local>
  %s = kina.all_slice %g[axis = 0, over = "vocab"] : !kina.tensor<4x4xf32, @local> -> !kina.tensor<2x4xf32, @local>
  return %s : !kina.tensor<2x4xf32, @local>
}

// A collective over a mesh axis of one device moves nothing: per device it
// folds away; in the global view it is only a reshard of the spelling.
// CHECK-LABEL: func.func @one_device
// CHECK-SAME: (%[[L:[^:]*]]: !kina.tensor<4x8xf32, @local>, %[[G:[^:]*]]: !kina.tensor<4x8xf32, @sharded(axis=0, over=heads)>)
// CHECK-NOT: kina.all_reduce
// CHECK: %[[R:.*]] = kina.reshard %[[G]] : !kina.tensor<4x8xf32, @sharded(axis=0, over=heads)> -> !kina.tensor<4x8xf32, @replicated>
// CHECK: return %[[L]], %[[R]]
func.func @one_device(%l: !kina.tensor<4x8xf32, @local>, %g: !kina.tensor<4x8xf32, @sharded(axis=0, over=heads)>) -> (!kina.tensor<4x8xf32, @local>, !kina.tensor<4x8xf32, @replicated>) {
  %r = kina.all_reduce %l[kind = sum, over = "heads"] : !kina.tensor<4x8xf32, @local> -> !kina.tensor<4x8xf32, @local>
  %a = kina.all_gather %g[axis = 0, over = "heads"] : !kina.tensor<4x8xf32, @sharded(axis=0, over=heads)> -> !kina.tensor<4x8xf32, @replicated>
  return %r, %a : !kina.tensor<4x8xf32, @local>, !kina.tensor<4x8xf32, @replicated>
}

// Only the last of a chain of reshards matters; a reshard to the same type
// is the value.
// CHECK-LABEL: func.func @reshards
// CHECK-SAME: (%[[H:[^:]*]]: !kina.tensor<4x8xf32, @host>)
// CHECK: %[[R:.*]] = kina.reshard %[[H]] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @replicated>
// CHECK-NEXT: return %[[R]], %[[H]]
func.func @reshards(%h: !kina.tensor<4x8xf32, @host>) -> (!kina.tensor<4x8xf32, @replicated>, !kina.tensor<4x8xf32, @host>) {
  %s = kina.reshard %h : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>
  %r = kina.reshard %s : !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)> -> !kina.tensor<4x8xf32, @replicated>
  %same = kina.reshard %h : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @host>
  return %r, %same : !kina.tensor<4x8xf32, @replicated>, !kina.tensor<4x8xf32, @host>
}
