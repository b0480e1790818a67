// RUN: kina-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @full_slice
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<4x8xf32, @host>)
// CHECK-NOT: kina.slice
// CHECK: return %[[X]]
func.func @full_slice(%x: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x8xf32, @host> {
  %0 = kina.slice %x [axis = 1, start = 0, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @host>
  return %0 : !kina.tensor<4x8xf32, @host>
}

// -----

// CHECK-LABEL: func.func @slice_of_slice
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<4x8xf32, @host>)
// CHECK: %[[S:.*]] = kina.slice %[[X]][axis = 1, start = 3, stop = 5]
// CHECK-NOT: kina.slice
// CHECK: return %[[S]]
func.func @slice_of_slice(%x: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x2xf32, @host> {
  %0 = kina.slice %x [axis = 1, start = 2, stop = 7] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x5xf32, @host>
  %1 = kina.slice %0 [axis = 1, start = 1, stop = 3] : !kina.tensor<4x5xf32, @host> -> !kina.tensor<4x2xf32, @host>
  return %1 : !kina.tensor<4x2xf32, @host>
}

// -----

// Slices on different axes stay two slices.
// CHECK-LABEL: func.func @slice_of_slice_other_axis
// CHECK: kina.slice %{{.*}}[axis = 1, start = 2, stop = 7]
// CHECK: kina.slice %{{.*}}[axis = 0, start = 1, stop = 3]
func.func @slice_of_slice_other_axis(%x: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<2x5xf32, @host> {
  %0 = kina.slice %x [axis = 1, start = 2, stop = 7] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x5xf32, @host>
  %1 = kina.slice %0 [axis = 0, start = 1, stop = 3] : !kina.tensor<4x5xf32, @host> -> !kina.tensor<2x5xf32, @host>
  return %1 : !kina.tensor<2x5xf32, @host>
}

// -----

// CHECK-LABEL: func.func @single_concat
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<4xf32, @host>)
// CHECK-NOT: kina.concat
// CHECK: return %[[X]]
func.func @single_concat(%x: !kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host> {
  %0 = kina.concat %x[axis = 0] : (!kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host>
  return %0 : !kina.tensor<4xf32, @host>
}

// -----

// Sharding lm_head and gathering the shards is the identity.
// CHECK-LABEL: func.func @shard_then_gather
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<4x8xf32, @host>)
// CHECK-NOT: kina.slice
// CHECK-NOT: kina.concat
// CHECK: return %[[X]]
func.func @shard_then_gather(%x: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x8xf32, @host> {
  %0 = kina.slice %x [axis = 1, start = 0, stop = 4] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %1 = kina.slice %x [axis = 1, start = 4, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %2 = kina.concat %0, %1 [axis = 1] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x8xf32, @host>
  return %2 : !kina.tensor<4x8xf32, @host>
}

// -----

// A partial run becomes one smaller slice; the other operand stays.
// CHECK-LABEL: func.func @adjacent_run
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<8xf32, @host>, %[[Y:.*]]: !kina.tensor<2xf32, @host>)
// CHECK: %[[S:.*]] = kina.slice %[[X]][axis = 0, start = 1, stop = 6]
// CHECK: kina.concat %[[Y]], %[[S]][axis = 0]
func.func @adjacent_run(%x: !kina.tensor<8xf32, @host>, %y: !kina.tensor<2xf32, @host>) -> !kina.tensor<7xf32, @host> {
  %0 = kina.slice %x [axis = 0, start = 1, stop = 3] : !kina.tensor<8xf32, @host> -> !kina.tensor<2xf32, @host>
  %1 = kina.slice %x [axis = 0, start = 3, stop = 6] : !kina.tensor<8xf32, @host> -> !kina.tensor<3xf32, @host>
  %2 = kina.concat %y, %0, %1[axis = 0] : (!kina.tensor<2xf32, @host>, !kina.tensor<2xf32, @host>, !kina.tensor<3xf32, @host>) -> !kina.tensor<7xf32, @host>
  return %2 : !kina.tensor<7xf32, @host>
}

// -----

// Must NOT fire: slices out of order, with a gap, of other values, or on
// another axis than the concat's.
// CHECK-LABEL: func.func @not_adjacent
// CHECK-COUNT-4: kina.concat
func.func @not_adjacent(%x: !kina.tensor<4x8xf32, @host>, %z: !kina.tensor<4x8xf32, @host>) -> (!kina.tensor<4x8xf32, @host>, !kina.tensor<4x7xf32, @host>, !kina.tensor<4x8xf32, @host>, !kina.tensor<8x4xf32, @host>) {
  %0 = kina.slice %x [axis = 1, start = 0, stop = 4] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %1 = kina.slice %x [axis = 1, start = 4, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %swapped = kina.concat %1, %0 [axis = 1] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x8xf32, @host>
  %2 = kina.slice %x [axis = 1, start = 5, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x3xf32, @host>
  %gap = kina.concat %0, %2 [axis = 1] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x3xf32, @host>) -> !kina.tensor<4x7xf32, @host>
  %3 = kina.slice %z [axis = 1, start = 4, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %other = kina.concat %0, %3 [axis = 1] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x8xf32, @host>
  %axis = kina.concat %0, %1[axis = 0] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<8x4xf32, @host>
  return %swapped, %gap, %other, %axis : !kina.tensor<4x8xf32, @host>, !kina.tensor<4x7xf32, @host>, !kina.tensor<4x8xf32, @host>, !kina.tensor<8x4xf32, @host>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<1x4x4xf32, @host>)
// CHECK: %[[R:.*]] = kina.reshape %[[X]] to [2, 8]
// CHECK-NOT: kina.reshape
// CHECK: return %[[R]]
func.func @reshape_of_reshape(%x: !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<2x8xf32, @host> {
  %0 = kina.reshape %x to [4, 4] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %1 = kina.reshape %0 to [2, 8] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<2x8xf32, @host>
  return %1 : !kina.tensor<2x8xf32, @host>
}

// -----

// CHECK-LABEL: func.func @reshape_roundtrip
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<1x4x4xf32, @host>)
// CHECK-NOT: kina.reshape
// CHECK: return %[[X]]
func.func @reshape_roundtrip(%x: !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<1x4x4xf32, @host> {
  %0 = kina.reshape %x to [1, 4, 2, 2] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
  %1 = kina.reshape %0 to [1, 4, 4] : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  return %1 : !kina.tensor<1x4x4xf32, @host>
}

// -----

// CHECK-LABEL: func.func @transpose_roundtrip
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<1x4x2x2xf32, @host>)
// CHECK-NOT: kina.transpose
// CHECK: return %[[X]]
func.func @transpose_roundtrip(%x: !kina.tensor<1x4x2x2xf32, @host>) -> !kina.tensor<1x4x2x2xf32, @host> {
  %0 = kina.transpose %x perm [0, 2, 1, 3] : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x2x4x2xf32, @host>
  %1 = kina.transpose %0 perm [0, 2, 1, 3] : !kina.tensor<1x2x4x2xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
  return %1 : !kina.tensor<1x4x2x2xf32, @host>
}

// -----

// Two rotations compose into one transpose.
// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<2x3x4xf32, @host>)
// CHECK: %[[T:.*]] = kina.transpose %[[X]] perm [2, 0, 1] : !kina.tensor<2x3x4xf32, @host> -> !kina.tensor<4x2x3xf32, @host>
// CHECK-NOT: kina.transpose
// CHECK: return %[[T]]
func.func @transpose_compose(%x: !kina.tensor<2x3x4xf32, @host>) -> !kina.tensor<4x2x3xf32, @host> {
  %0 = kina.transpose %x perm [1, 2, 0] : !kina.tensor<2x3x4xf32, @host> -> !kina.tensor<3x4x2xf32, @host>
  %1 = kina.transpose %0 perm [1, 2, 0] : !kina.tensor<3x4x2xf32, @host> -> !kina.tensor<4x2x3xf32, @host>
  return %1 : !kina.tensor<4x2x3xf32, @host>
}

// -----

// CHECK-LABEL: func.func @identity_transpose
// CHECK-NOT: kina.transpose
func.func @identity_transpose(%x: !kina.tensor<2x3xf32, @host>) -> !kina.tensor<2x3xf32, @host> {
  %0 = kina.transpose %x perm [0, 1] : !kina.tensor<2x3xf32, @host> -> !kina.tensor<2x3xf32, @host>
  return %0 : !kina.tensor<2x3xf32, @host>
}

// -----

// CHECK-LABEL: func.func @broadcast_same
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<4x4xf32, @host>)
// CHECK-NOT: kina.broadcast
// CHECK: return %[[X]]
func.func @broadcast_same(%x: !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host> {
  %0 = kina.broadcast %x to [4, 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<4x4xf32, @host>
  return %0 : !kina.tensor<4x4xf32, @host>
}

// -----

// A real broadcast stays.
// CHECK-LABEL: func.func @broadcast_kept
// CHECK: kina.broadcast %{{.*}} to [1, 4, 4]
func.func @broadcast_kept(%x: !kina.tensor<4x4xf32, @host>) -> !kina.tensor<1x4x4xf32, @host> {
  %0 = kina.broadcast %x to [1, 4, 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  return %0 : !kina.tensor<1x4x4xf32, @host>
}

// -----

// A reduction over an axis of size 1 is its operand.
// CHECK-LABEL: func.func @unit_reductions
// CHECK-SAME: (%[[X:.*]]: !kina.tensor<4x1xf32, @host>)
func.func @unit_reductions(%x: !kina.tensor<4x1xf32, @host>) -> !kina.tensor<4x1xf32, @host> {
  // CHECK-NOT: kina.sum
  // CHECK-NOT: kina.max
  // CHECK: kina.mean %[[X]][axis = 0]
  %s = kina.sum %x [axis = 1] : !kina.tensor<4x1xf32, @host>
  %x2 = kina.max %s [axis = 1] : !kina.tensor<4x1xf32, @host>
  %m = kina.mean %x2 [axis = 0] : (!kina.tensor<4x1xf32, @host>) -> !kina.tensor<1x1xf32, @host>
  %b = kina.broadcast %m to [4, 1] : !kina.tensor<1x1xf32, @host> -> !kina.tensor<4x1xf32, @host>
  return %b : !kina.tensor<4x1xf32, @host>
}
