// RUN: kina-opt %s --kina-merge-shards --canonicalize --cse --split-input-file | FileCheck %s

// Column blocks of one weight, gathered: one matmul of the whole weight.
// CHECK-LABEL: func.func @columns
// CHECK-SAME: (%[[X:[^:]*]]: !kina.tensor<4x4xf32, @host>, %[[W:[^:]*]]: !kina.tensor<4x8xf32, @host>)
// CHECK-NEXT: %[[Z:.*]] = kina.matmul %[[X]], %[[W]]
// CHECK-NEXT: return %[[Z]]
func.func @columns(%x: !kina.tensor<4x4xf32, @host>, %w: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x8xf32, @host> {
  %w0 = kina.slice %w[axis = 1, start = 0, stop = 4] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %w1 = kina.slice %w[axis = 1, start = 4, stop = 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
  %z0 = kina.matmul %x, %w0 : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host>
  %z1 = kina.matmul %x, %w1 : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host>
  %z = kina.concat %z0, %z1[axis = 1] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x8xf32, @host>
  return %z : !kina.tensor<4x8xf32, @host>
}

// -----

// Row-parallel partial products summed: one matmul over the whole K.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[A:[^:]*]]: !kina.tensor<4x4xf32, @host>, %[[W:[^:]*]]: !kina.tensor<4x4xf32, @host>)
// CHECK-NEXT: %[[Z:.*]] = kina.matmul %[[A]], %[[W]]
// CHECK-NEXT: return %[[Z]]
func.func @rows(%a: !kina.tensor<4x4xf32, @host>, %w: !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host> {
  %a0 = kina.slice %a[axis = 1, start = 0, stop = 2] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<4x2xf32, @host>
  %a1 = kina.slice %a[axis = 1, start = 2, stop = 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<4x2xf32, @host>
  %w0 = kina.slice %w[axis = 0, start = 0, stop = 2] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<2x4xf32, @host>
  %w1 = kina.slice %w[axis = 0, start = 2, stop = 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<2x4xf32, @host>
  %p0 = kina.matmul %a0, %w0 : (!kina.tensor<4x2xf32, @host>, !kina.tensor<2x4xf32, @host>) -> !kina.tensor<4x4xf32, @host>
  %p1 = kina.matmul %a1, %w1 : (!kina.tensor<4x2xf32, @host>, !kina.tensor<2x4xf32, @host>) -> !kina.tensor<4x4xf32, @host>
  %s = kina.add %p0, %p1 : !kina.tensor<4x4xf32, @host>
  return %s : !kina.tensor<4x4xf32, @host>
}

// -----

// Per-head blocks through a softmax on another axis and a broadcast of one
// mask: concats sink to the heads' inputs, which are one value again.
// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[S:[^:]*]]: !kina.tensor<2x4x4xf32, @host>, %[[M:[^:]*]]: !kina.tensor<4x4xf32, @host>)
// CHECK-NEXT: %[[B:.*]] = kina.broadcast %[[M]] to [2, 4, 4]
// CHECK-NEXT: %[[T:.*]] = kina.add %[[S]], %[[B]]
// CHECK-NEXT: %[[P:.*]] = kina.softmax %[[T]][axis = 2]
// CHECK-NEXT: return %[[P]]
func.func @heads(%s: !kina.tensor<2x4x4xf32, @host>, %m: !kina.tensor<4x4xf32, @host>) -> !kina.tensor<2x4x4xf32, @host> {
  %s0 = kina.slice %s[axis = 0, start = 0, stop = 1] : !kina.tensor<2x4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  %s1 = kina.slice %s[axis = 0, start = 1, stop = 2] : !kina.tensor<2x4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  %b0 = kina.broadcast %m to [1, 4, 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  %b1 = kina.broadcast %m to [1, 4, 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
  %t0 = kina.add %s0, %b0 : !kina.tensor<1x4x4xf32, @host>
  %t1 = kina.add %s1, %b1 : !kina.tensor<1x4x4xf32, @host>
  %p0 = kina.softmax %t0[axis = 2] : !kina.tensor<1x4x4xf32, @host>
  %p1 = kina.softmax %t1[axis = 2] : !kina.tensor<1x4x4xf32, @host>
  %p = kina.concat %p0, %p1[axis = 0] : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<2x4x4xf32, @host>
  return %p : !kina.tensor<2x4x4xf32, @host>
}

// -----

// Not along a softmax's own axis: a softmax of a block is not a block of
// the softmax, and the concat stays.
// CHECK-LABEL: func.func @softmax_axis
// CHECK: kina.concat
func.func @softmax_axis(%a: !kina.tensor<4x2xf32, @host>, %b: !kina.tensor<4x2xf32, @host>) -> !kina.tensor<4x4xf32, @host> {
  %pa = kina.softmax %a[axis = 1] : !kina.tensor<4x2xf32, @host>
  %pb = kina.softmax %b[axis = 1] : !kina.tensor<4x2xf32, @host>
  %p = kina.concat %pa, %pb[axis = 1] : (!kina.tensor<4x2xf32, @host>, !kina.tensor<4x2xf32, @host>) -> !kina.tensor<4x4xf32, @host>
  return %p : !kina.tensor<4x4xf32, @host>
}
