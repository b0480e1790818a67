// RUN: kina-opt %s --kina-partition=form=spmd --split-input-file | kina-opt --split-input-file | FileCheck %s
// RUN: not kina-opt %s --kina-partition=form=devices --split-input-file 2>&1 | FileCheck %s --check-prefix=FORM

// FORM: error: kina-partition: option 'form' is host or spmd, got 'devices'

kina.mesh @mesh [x = 2]

// One device's program: its blocks (@local, local shapes), the ops on
// blocks (a broadcast's target made local), the collectives in their
// per-device view; arguments and results say which global value they are
// a block of. The host caller is not part of it.
// CHECK: kina.mesh @mesh [x = 2]
// CHECK-LABEL: func.func @column
// CHECK-SAME: (%[[X:[^:]*]]: !kina.tensor<1x4x4xf32, @local> {kina.global = !kina.tensor<1x4x4xf32, @replicated>}, %[[W:[^:]*]]: !kina.tensor<4x4xf32, @local> {kina.global = !kina.tensor<4x8xf32, @sharded(axis=1)>})
// CHECK-SAME: -> (!kina.tensor<1x4x8xf32, @local> {kina.global = !kina.tensor<1x4x8xf32, @replicated>})
// CHECK: %[[B:.*]] = kina.broadcast %[[W]] to [1, 4, 4] : !kina.tensor<4x4xf32, @local> -> !kina.tensor<1x4x4xf32, @local>
// CHECK: %[[Z:.*]] = kina.matmul %[[X]], %[[B]] : {{.*}} -> !kina.tensor<1x4x4xf32, @local>
// CHECK: %[[L:.*]] = kina.all_gather %[[Z]][axis = 2, over = "x"] : !kina.tensor<1x4x4xf32, @local> -> !kina.tensor<1x4x8xf32, @local>
// CHECK: return %[[L]]
// CHECK-NOT: func.func @main
func.func @column(%x: !kina.tensor<1x4x4xf32, @replicated>, %w: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<1x4x8xf32, @replicated> {
  %wb = kina.broadcast %w to [1, 4, 8] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
  %z = kina.matmul %x, %wb : (!kina.tensor<1x4x4xf32, @replicated>, !kina.tensor<1x4x8xf32, @sharded(axis=2)>) -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
  %l = kina.all_gather %z[axis = 2, over = "x"] : !kina.tensor<1x4x8xf32, @sharded(axis=2)> -> !kina.tensor<1x4x8xf32, @replicated>
  return %l : !kina.tensor<1x4x8xf32, @replicated>
}
func.func @main(%x: !kina.tensor<1x4x4xf32, @host>, %w: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host> {
  %dx = kina.reshard %x : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @replicated>
  %dw = kina.reshard %w : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
  %r = call @column(%dx, %dw) : (!kina.tensor<1x4x4xf32, @replicated>, !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<1x4x8xf32, @replicated>
  %h = kina.reshard %r : !kina.tensor<1x4x8xf32, @replicated> -> !kina.tensor<1x4x8xf32, @host>
  return %h : !kina.tensor<1x4x8xf32, @host>
}

// -----

kina.mesh @mesh [heads = 2, vocab = 2]

// Partial sums per device, all-reduced over one mesh axis of a 2-D mesh.
// CHECK-LABEL: func.func @row
// CHECK-SAME: (%{{[^:]*}}: !kina.tensor<4x2xf32, @local> {kina.global = !kina.tensor<4x4xf32, @sharded(axis=1, over=heads)>}, %{{[^:]*}}: !kina.tensor<2x4xf32, @local> {kina.global = !kina.tensor<4x4xf32, @sharded(axis=0, over=heads)>})
// CHECK: %[[P:.*]] = kina.matmul {{.*}} -> !kina.tensor<4x4xf32, @local>
// CHECK: kina.all_reduce %[[P]][kind = sum, over = "heads"] : !kina.tensor<4x4xf32, @local> -> !kina.tensor<4x4xf32, @local>
func.func @row(%a: !kina.tensor<4x4xf32, @sharded(axis=1, over=heads)>, %w: !kina.tensor<4x4xf32, @sharded(axis=0, over=heads)>) -> !kina.tensor<4x4xf32, @replicated> {
  %p = kina.matmul %a, %w : (!kina.tensor<4x4xf32, @sharded(axis=1, over=heads)>, !kina.tensor<4x4xf32, @sharded(axis=0, over=heads)>) -> !kina.tensor<4x4xf32, @partial(over=heads)>
  %r = kina.all_reduce %p[kind = sum, over = "heads"] : !kina.tensor<4x4xf32, @partial(over=heads)> -> !kina.tensor<4x4xf32, @replicated>
  return %r : !kina.tensor<4x4xf32, @replicated>
}
