// RUN: kina-opt %s --kina-propagate-sharding --split-input-file --verify-diagnostics | FileCheck %s

kina.mesh @mesh [x = 2]

// Column-parallel: a weight split on N gives a result split on N, through
// the broadcast; the replicated operand is used as it is. Nothing moves.
// CHECK-LABEL: func.func @column
// CHECK: kina.broadcast {{.*}} -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
// CHECK: kina.matmul {{.*}} -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
// CHECK-NOT: kina.all_
func.func @column(%x: !kina.tensor<1x4x4xf32, @replicated>, %w: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<1x4x8xf32, @sharded(axis=2)> {
  %wb = kina.broadcast %w to [1, 4, 8] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<1x4x8xf32, @auto>
  %z = kina.matmul %x, %wb : (!kina.tensor<1x4x4xf32, @replicated>, !kina.tensor<1x4x8xf32, @auto>) -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
  return %z : !kina.tensor<1x4x8xf32, @sharded(axis=2)>
}

// -----

kina.mesh @mesh [x = 2]

// Row-parallel: both operands split on K make the product partial; adding
// a replicated value needs the whole sum, so it is all-reduced there:
// 2 (n-1)/n of the 1x4x4 f32 block = 64 bytes per device.
// CHECK-LABEL: func.func @row
// CHECK: %[[P:.*]] = kina.matmul {{.*}} -> !kina.tensor<1x4x4xf32, @partial>
// CHECK: %[[S:.*]] = kina.all_reduce %[[P]][kind = sum, over = "x"] : !kina.tensor<1x4x4xf32, @partial> -> !kina.tensor<1x4x4xf32, @replicated>
// CHECK: kina.add %{{.*}}, %[[S]] : !kina.tensor<1x4x4xf32, @replicated>
func.func @row(%x: !kina.tensor<1x4x4xf32, @replicated>, %a: !kina.tensor<1x4x4xf32, @sharded(axis=2)> {kina.name = "a"}, %w: !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<1x4x4xf32, @replicated> {
  %wb = kina.broadcast %w to [1, 4, 4] : !kina.tensor<4x4xf32, @sharded(axis=0)> -> !kina.tensor<1x4x4xf32, @auto>
  %p = kina.matmul %a, %wb : (!kina.tensor<1x4x4xf32, @sharded(axis=2)>, !kina.tensor<1x4x4xf32, @auto>) -> !kina.tensor<1x4x4xf32, @auto>
  // expected-remark @below {{inserted kina.all_reduce over mesh axis 'x' of a value placed @partial, from parameter 'a': operand #1 is a partial sum, and kina.add needs whole values; each device sends 64 bytes}}
  %r = kina.add %x, %p : (!kina.tensor<1x4x4xf32, @replicated>, !kina.tensor<1x4x4xf32, @auto>) -> !kina.tensor<1x4x4xf32, @replicated>
  return %r : !kina.tensor<1x4x4xf32, @replicated>
}

// -----

kina.mesh @mesh [x = 2]

// A sum of two partial values stays partial.
// CHECK-LABEL: func.func @partial_sum
// CHECK: kina.add {{.*}} : !kina.tensor<4x4xf32, @partial>
// CHECK-NOT: kina.all_reduce
func.func @partial_sum(%a: !kina.tensor<4x4xf32, @sharded(axis=1)>, %b: !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @partial> {
  %p = kina.matmul %a, %b : (!kina.tensor<4x4xf32, @sharded(axis=1)>, !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @auto>
  %q = kina.matmul %a, %b : (!kina.tensor<4x4xf32, @sharded(axis=1)>, !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @auto>
  %s = kina.add %p, %q : (!kina.tensor<4x4xf32, @auto>, !kina.tensor<4x4xf32, @auto>) -> !kina.tensor<4x4xf32, @partial>
  return %s : !kina.tensor<4x4xf32, @partial>
}

// -----

kina.mesh @mesh [x = 2]

// Operands that split different axes over one mesh axis: the one whose
// gathering moves fewer bytes is gathered; here they tie, and the result's
// annotation (split on axis 1) decides: `a` is gathered and cut again,
// which after the propagation is one all_to_all (half the bytes).
// CHECK-LABEL: func.func @conflict
// CHECK: %[[C:.*]] = kina.all_to_all %{{.*}}[from = 0, to = 1, over = "x"] : !kina.tensor<8x8xf32, @sharded(axis=0)> -> !kina.tensor<8x8xf32, @sharded(axis=1)>
// CHECK: kina.sub %[[C]], %{{.*}} : !kina.tensor<8x8xf32, @sharded(axis=1)>
func.func @conflict(%a: !kina.tensor<8x8xf32, @sharded(axis=0)> {kina.name = "a"}, %b: !kina.tensor<8x8xf32, @sharded(axis=1)> {kina.name = "b"}) -> !kina.tensor<8x8xf32, @sharded(axis=1)> {
  // expected-remark @below {{inserted kina.all_gather over mesh axis 'x' of a value placed @sharded(axis=0), from parameter 'a': operand #0 splits another axis over 'x' than operand #1 (@sharded(axis=1), from parameter 'b'); each device sends 128 bytes}}
  %d = kina.sub %a, %b : (!kina.tensor<8x8xf32, @sharded(axis=0)>, !kina.tensor<8x8xf32, @sharded(axis=1)>) -> !kina.tensor<8x8xf32, @sharded(axis=1)>
  return %d : !kina.tensor<8x8xf32, @sharded(axis=1)>
}

// -----

kina.mesh @mesh [x = 2]

// A softmax needs its axis whole; other axes stay split.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[G:.*]] = kina.all_gather %{{.*}}[axis = 1, over = "x"]
// CHECK: kina.softmax %[[G]][axis = 1] : !kina.tensor<2x8xf32, @replicated>
// CHECK: kina.softmax %{{.*}}[axis = 1] : !kina.tensor<2x8xf32, @sharded(axis=0)>
func.func @softmax(%s: !kina.tensor<2x8xf32, @sharded(axis=1)> {kina.name = "s"}, %t: !kina.tensor<2x8xf32, @sharded(axis=0)>) -> (!kina.tensor<2x8xf32, @replicated>, !kina.tensor<2x8xf32, @sharded(axis=0)>) {
  // expected-remark @below {{inserted kina.all_gather over mesh axis 'x' of a value placed @sharded(axis=1), from parameter 's': kina.softmax needs axis 1 of operand #0 whole; each device sends 32 bytes}}
  %p = kina.softmax %s[axis = 1] : (!kina.tensor<2x8xf32, @sharded(axis=1)>) -> !kina.tensor<2x8xf32, @replicated>
  %q = kina.softmax %t[axis = 1] : (!kina.tensor<2x8xf32, @sharded(axis=0)>) -> !kina.tensor<2x8xf32, @sharded(axis=0)>
  return %p, %q : !kina.tensor<2x8xf32, @replicated>, !kina.tensor<2x8xf32, @sharded(axis=0)>
}

// -----

kina.mesh @mesh [x = 2]

// Heads: a split of the flat projection's columns becomes a split of the
// head axis through reshape and transpose; an annotation asking for a
// split that the value does not have is a cut after the op (no data moves,
// so no remark).
// CHECK-LABEL: func.func @heads
// CHECK: kina.reshape {{.*}} -> !kina.tensor<1x4x2x2xf32, @sharded(axis=2)>
// CHECK: kina.transpose {{.*}} -> !kina.tensor<1x2x4x2xf32, @sharded(axis=1)>
// CHECK: %[[R:.*]] = kina.reshape {{.*}} -> !kina.tensor<1x4x4xf32, @replicated>
// CHECK: kina.all_slice %[[R]][axis = 1, over = "x"] : !kina.tensor<1x4x4xf32, @replicated> -> !kina.tensor<1x4x4xf32, @sharded(axis=1)>
func.func @heads(%q: !kina.tensor<1x4x4xf32, @sharded(axis=2)>, %x: !kina.tensor<4x1x4xf32, @replicated>) -> (!kina.tensor<1x2x4x2xf32, @sharded(axis=1)>, !kina.tensor<1x4x4xf32, @sharded(axis=1)>) {
  %r = kina.reshape %q to [1, 4, 2, 2] : !kina.tensor<1x4x4xf32, @sharded(axis=2)> -> !kina.tensor<1x4x2x2xf32, @auto>
  %t = kina.transpose %r perm [0, 2, 1, 3] : !kina.tensor<1x4x2x2xf32, @auto> -> !kina.tensor<1x2x4x2xf32, @sharded(axis=1)>
  %y = kina.reshape %x to [1, 4, 4] : !kina.tensor<4x1x4xf32, @replicated> -> !kina.tensor<1x4x4xf32, @sharded(axis=1)>
  return %t, %y : !kina.tensor<1x2x4x2xf32, @sharded(axis=1)>, !kina.tensor<1x4x4xf32, @sharded(axis=1)>
}

// -----

kina.mesh @mesh [x = 4]

// A split that cannot map through a reshape (4 heads of the flat axis into
// an outer dim of 2) is gathered first.
// CHECK-LABEL: func.func @unmappable
// CHECK: kina.all_gather
// CHECK: kina.reshape {{.*}} -> !kina.tensor<1x2x8xf32, @replicated>
func.func @unmappable(%q: !kina.tensor<1x16xf32, @sharded(axis=1)> {kina.name = "q"}) -> !kina.tensor<1x2x8xf32, @replicated> {
  // expected-remark @below {{inserted kina.all_gather over mesh axis 'x' of a value placed @sharded(axis=1), from parameter 'q': kina.reshape cannot keep axis 1 of operand #0 split over 'x'; each device sends 48 bytes}}
  %r = kina.reshape %q to [1, 2, 8] : !kina.tensor<1x16xf32, @sharded(axis=1)> -> !kina.tensor<1x2x8xf32, @replicated>
  return %r : !kina.tensor<1x2x8xf32, @replicated>
}

// -----

kina.mesh @mesh [heads = 2, vocab = 2]

// Two mesh axes at once: heads split the batch of attention, vocab the
// columns of the logits; each axis is decided on its own.
// CHECK-LABEL: func.func @two_axes
// CHECK: kina.matmul {{.*}} -> !kina.tensor<2x4x8xf32, @sharded(axis=[0, 2], over=[heads, vocab])>
func.func @two_axes(%x: !kina.tensor<2x4x4xf32, @sharded(axis=0, over=heads)>, %w: !kina.tensor<2x4x8xf32, @sharded(axis=2, over=vocab)>) -> !kina.tensor<2x4x8xf32, @sharded(axis=[0, 2], over=[heads, vocab])> {
  %z = kina.matmul %x, %w : (!kina.tensor<2x4x4xf32, @sharded(axis=0, over=heads)>, !kina.tensor<2x4x8xf32, @sharded(axis=2, over=vocab)>) -> !kina.tensor<2x4x8xf32, @sharded(axis=[0, 2], over=[heads, vocab])>
  return %z : !kina.tensor<2x4x8xf32, @sharded(axis=[0, 2], over=[heads, vocab])>
}
