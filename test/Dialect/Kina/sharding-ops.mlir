// RUN: kina-opt %s | kina-opt | FileCheck %s

// The mesh, every placement spelling, reshard and each collective in the
// global view (placements change) and the per-device view (@local: shapes
// change by the mesh axis size) print and parse back.

// CHECK: kina.mesh @mesh [heads = 2, vocab = 4]
kina.mesh @mesh [heads = 2, vocab = 4]

// CHECK-LABEL: func.func @placements
// CHECK-SAME: !kina.tensor<4x8xf32, @host>
// CHECK-SAME: !kina.tensor<4x8xf32, @replicated>
// CHECK-SAME: !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>
// CHECK-SAME: !kina.tensor<4x8xf32, @sharded(axis=[0, 1], over=[heads, vocab])>
// CHECK-SAME: !kina.tensor<4x8xf32, @partial(over=heads)>
// CHECK-SAME: !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab, partial=heads)>
// CHECK-SAME: !kina.tensor<4x8xf32, @auto>
// CHECK-SAME: !kina.tensor<4x8xf32, @local>
func.func @placements(%a: !kina.tensor<4x8xf32, @host>,
                      %b: !kina.tensor<4x8xf32, @replicated>,
                      %c: !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>,
                      // Splits print sorted by tensor axis.
                      %d: !kina.tensor<4x8xf32, @sharded(axis=[1, 0], over=[vocab, heads])>,
                      %e: !kina.tensor<4x8xf32, @partial(over=heads)>,
                      %f: !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab, partial=heads)>,
                      %g: !kina.tensor<4x8xf32, @auto>,
                      %h: !kina.tensor<4x8xf32, @local>) {
  return
}

// CHECK-LABEL: func.func @global_view
func.func @global_view(%w: !kina.tensor<4x8xf32, @host>, %p: !kina.tensor<4x8xf32, @partial(over=heads)>) -> !kina.tensor<4x8xf32, @replicated> {
  // CHECK: %[[R:.*]] = kina.reshard %{{.*}} : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @replicated>
  %r = kina.reshard %w : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @replicated>
  // CHECK: %[[S:.*]] = kina.all_slice %[[R]][axis = 1, over = "vocab"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>
  %s = kina.all_slice %r [axis = 1, over = "vocab"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>
  // CHECK: %[[T:.*]] = kina.all_to_all %[[S]][from = 1, to = 0, over = "vocab"] : !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)> -> !kina.tensor<4x8xf32, @sharded(axis=0, over=vocab)>
  %t = kina.all_to_all %s [from = 1, to = 0, over = "vocab"] : !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)> -> !kina.tensor<4x8xf32, @sharded(axis=0, over=vocab)>
  // CHECK: kina.all_gather %[[T]][axis = 0, over = "vocab"] : !kina.tensor<4x8xf32, @sharded(axis=0, over=vocab)> -> !kina.tensor<4x8xf32, @replicated>
  %g = kina.all_gather %t [axis = 0, over = "vocab"] : !kina.tensor<4x8xf32, @sharded(axis=0, over=vocab)> -> !kina.tensor<4x8xf32, @replicated>
  // CHECK: kina.all_reduce %{{.*}}[kind = sum, over = "heads"] : !kina.tensor<4x8xf32, @partial(over=heads)> -> !kina.tensor<4x8xf32, @replicated>
  %a = kina.all_reduce %p [kind = sum, over = "heads"] : !kina.tensor<4x8xf32, @partial(over=heads)> -> !kina.tensor<4x8xf32, @replicated>
  // CHECK: kina.reduce_scatter %{{.*}}[axis = 1, over = "heads"] : !kina.tensor<4x8xf32, @partial(over=heads)> -> !kina.tensor<4x8xf32, @sharded(axis=1, over=heads)>
  %rs = kina.reduce_scatter %p [axis = 1, over = "heads"] : !kina.tensor<4x8xf32, @partial(over=heads)> -> !kina.tensor<4x8xf32, @sharded(axis=1, over=heads)>
  return %g : !kina.tensor<4x8xf32, @replicated>
}

// CHECK-LABEL: func.func @local_view
func.func @local_view(%x: !kina.tensor<4x2xf32, @local>) -> !kina.tensor<4x8xf32, @local> {
  // CHECK: kina.all_gather %{{.*}}[axis = 1, over = "vocab"] : !kina.tensor<4x2xf32, @local> -> !kina.tensor<4x8xf32, @local>
  %g = kina.all_gather %x [axis = 1, over = "vocab"] : !kina.tensor<4x2xf32, @local> -> !kina.tensor<4x8xf32, @local>
  // CHECK: kina.all_slice %{{.*}}[axis = 0, over = "heads"] : !kina.tensor<4x8xf32, @local> -> !kina.tensor<2x8xf32, @local>
  %s = kina.all_slice %g [axis = 0, over = "heads"] : !kina.tensor<4x8xf32, @local> -> !kina.tensor<2x8xf32, @local>
  // CHECK: kina.all_reduce %{{.*}}[kind = max, over = "heads"] : !kina.tensor<2x8xf32, @local> -> !kina.tensor<2x8xf32, @local>
  %m = kina.all_reduce %s [kind = max, over = "heads"] : !kina.tensor<2x8xf32, @local> -> !kina.tensor<2x8xf32, @local>
  // CHECK: kina.reduce_scatter %{{.*}}[axis = 1, over = "vocab"] : !kina.tensor<2x8xf32, @local> -> !kina.tensor<2x2xf32, @local>
  %r = kina.reduce_scatter %m [axis = 1, over = "vocab"] : !kina.tensor<2x8xf32, @local> -> !kina.tensor<2x2xf32, @local>
  // CHECK: kina.all_to_all %{{.*}}[from = 0, to = 1, over = "heads"] : !kina.tensor<2x2xf32, @local> -> !kina.tensor<4x1xf32, @local>
  %t = kina.all_to_all %r [from = 0, to = 1, over = "heads"] : !kina.tensor<2x2xf32, @local> -> !kina.tensor<4x1xf32, @local>
  // CHECK: kina.permute %{{.*}}[shift = 1, over = "heads"] : !kina.tensor<4x1xf32, @local> -> !kina.tensor<4x1xf32, @local>
  %p = kina.permute %t [shift = 1, over = "heads"] : !kina.tensor<4x1xf32, @local> -> !kina.tensor<4x1xf32, @local>
  // CHECK: kina.permute %{{.*}}[shift = -3, over = "vocab", cyclic] : !kina.tensor<4x1xf32, @local> -> !kina.tensor<4x1xf32, @local>
  %q = kina.permute %p [shift = -3, over = "vocab", cyclic] : !kina.tensor<4x1xf32, @local> -> !kina.tensor<4x1xf32, @local>
  return %g : !kina.tensor<4x8xf32, @local>
}
