// RUN: kina-opt %s --kina-partition --split-input-file --verify-diagnostics | FileCheck %s --implicit-check-not=kina.mesh

kina.mesh @mesh [x = 2]

// A split parameter is sliced into its blocks; an op runs once per block
// on local shapes (the broadcast's target made local); replicated values
// are used whole, once; all_gather is a concat in device order, and the
// function keeps its global, now @host, signature.
// CHECK-LABEL: func.func @column
// CHECK-SAME: (%[[X:[^:]*]]: !kina.tensor<1x4x4xf32, @host>, %[[W:[^:]*]]: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host>
// CHECK-DAG: %[[W0:.*]] = kina.slice %[[W]][axis = 1, start = 0, stop = 4]
// CHECK-DAG: %[[W1:.*]] = kina.slice %[[W]][axis = 1, start = 4, stop = 8]
// CHECK-DAG: %[[B0:.*]] = kina.broadcast %[[W0]] to [1, 4, 4]
// CHECK-DAG: %[[B1:.*]] = kina.broadcast %[[W1]] to [1, 4, 4]
// CHECK-DAG: %[[Z0:.*]] = kina.matmul %[[X]], %[[B0]]
// CHECK-DAG: %[[Z1:.*]] = kina.matmul %[[X]], %[[B1]]
// CHECK: %[[L:.*]] = kina.concat %[[Z0]], %[[Z1]][axis = 2] : {{.*}} -> !kina.tensor<1x4x8xf32, @host>
// CHECK: return %[[L]]
func.func @column(%x: !kina.tensor<1x4x4xf32, @replicated>, %w: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<1x4x8xf32, @replicated> {
  %wb = kina.broadcast %w to [1, 4, 8] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
  %z = kina.matmul %x, %wb : (!kina.tensor<1x4x4xf32, @replicated>, !kina.tensor<1x4x8xf32, @sharded(axis=2)>) -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
  %l = kina.all_gather %z[axis = 2, over = "x"] : !kina.tensor<1x4x8xf32, @sharded(axis=2)> -> !kina.tensor<1x4x8xf32, @replicated>
  return %l : !kina.tensor<1x4x8xf32, @replicated>
}

// -----

kina.mesh @mesh [x = 2]

// Row-parallel: the partial products are the blocks; all_reduce adds them
// in device order. all_slice is a slice of a device's block.
// CHECK-LABEL: func.func @row
// CHECK-SAME: (%[[A:[^:]*]]: !kina.tensor<4x4xf32, @host>, %[[W:[^:]*]]: !kina.tensor<4x4xf32, @host>)
// CHECK-DAG: %[[A0:.*]] = kina.slice %[[A]][axis = 1, start = 0, stop = 2]
// CHECK-DAG: %[[W0:.*]] = kina.slice %[[W]][axis = 0, start = 0, stop = 2]
// CHECK-DAG: %[[A1:.*]] = kina.slice %[[A]][axis = 1, start = 2, stop = 4]
// CHECK-DAG: %[[W1:.*]] = kina.slice %[[W]][axis = 0, start = 2, stop = 4]
// CHECK-DAG: %[[P0:.*]] = kina.matmul %[[A0]], %[[W0]]
// CHECK-DAG: %[[P1:.*]] = kina.matmul %[[A1]], %[[W1]]
// CHECK: %[[S:.*]] = kina.add %[[P0]], %[[P1]] : !kina.tensor<4x4xf32, @host>
// CHECK-DAG: %[[S0:.*]] = kina.slice %[[S]][axis = 0, start = 0, stop = 2]
// CHECK-DAG: %[[S1:.*]] = kina.slice %[[S]][axis = 0, start = 2, stop = 4]
// CHECK: %[[J:.*]] = kina.concat %[[S0]], %[[S1]][axis = 0]
// CHECK: return %[[J]]
func.func @row(%a: !kina.tensor<4x4xf32, @sharded(axis=1)>, %w: !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @sharded(axis=0)> {
  %p = kina.matmul %a, %w : (!kina.tensor<4x4xf32, @sharded(axis=1)>, !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @partial>
  %r = kina.all_reduce %p[kind = sum, over = "x"] : !kina.tensor<4x4xf32, @partial> -> !kina.tensor<4x4xf32, @replicated>
  %s = kina.all_slice %r[axis = 0, over = "x"] : !kina.tensor<4x4xf32, @replicated> -> !kina.tensor<4x4xf32, @sharded(axis=0)>
  return %s : !kina.tensor<4x4xf32, @sharded(axis=0)>
}

// -----

kina.mesh @mesh [x = 2]

// reduce_scatter is the sum then each device's slice; all_to_all a concat
// on the old axis then a slice on the new.
// CHECK-LABEL: func.func @scatter_and_move
// CHECK: %[[S:.*]] = kina.add
// CHECK: kina.slice %[[S]][axis = 0, start = 0, stop = 2]
// CHECK: kina.slice %[[S]][axis = 0, start = 2, stop = 4]
// CHECK: %[[C:.*]] = kina.concat {{.*}}[axis = 0]
// CHECK: kina.slice %[[C]][axis = 1, start = 0, stop = 2]
// CHECK: kina.slice %[[C]][axis = 1, start = 2, stop = 4]
func.func @scatter_and_move(%a: !kina.tensor<4x4xf32, @sharded(axis=1)>, %w: !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @sharded(axis=1)> {
  %p = kina.matmul %a, %w : (!kina.tensor<4x4xf32, @sharded(axis=1)>, !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @partial>
  %s = kina.reduce_scatter %p[axis = 0, over = "x"] : !kina.tensor<4x4xf32, @partial> -> !kina.tensor<4x4xf32, @sharded(axis=0)>
  %t = kina.all_to_all %s[from = 0, to = 1, over = "x"] : !kina.tensor<4x4xf32, @sharded(axis=0)> -> !kina.tensor<4x4xf32, @sharded(axis=1)>
  return %t : !kina.tensor<4x4xf32, @sharded(axis=1)>
}

// -----

kina.mesh @mesh [heads = 2, vocab = 2]

// Two mesh axes: four blocks, each a slice on both axes; the result is
// assembled by joining the innermost split first.
// CHECK-LABEL: func.func @grid
// CHECK-COUNT-4: kina.neg {{.*}} : !kina.tensor<2x2xf32, @host>
// CHECK: %[[R0:.*]] = kina.concat {{.*}}[axis = 1]
// CHECK: %[[R1:.*]] = kina.concat {{.*}}[axis = 1]
// CHECK: %[[ALL:.*]] = kina.concat %[[R0]], %[[R1]][axis = 0] : {{.*}} -> !kina.tensor<4x4xf32, @host>
// CHECK: return %[[ALL]]
func.func @grid(%x: !kina.tensor<4x4xf32, @sharded(axis=[0, 1], over=[heads, vocab])>) -> !kina.tensor<4x4xf32, @sharded(axis=[0, 1], over=[heads, vocab])> {
  %n = kina.neg %x : (!kina.tensor<4x4xf32, @sharded(axis=[0, 1], over=[heads, vocab])>) -> !kina.tensor<4x4xf32, @sharded(axis=[0, 1], over=[heads, vocab])>
  return %n : !kina.tensor<4x4xf32, @sharded(axis=[0, 1], over=[heads, vocab])>
}

// -----

kina.mesh @mesh [x = 2]

// A host caller passes and gets global tensors: reshards disappear.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[H:[^:]*]]: !kina.tensor<4x4xf32, @host>)
// CHECK: %[[R:.*]] = call @callee(%[[H]]) : (!kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host>
// CHECK: return %[[R]]
func.func @callee(%x: !kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @sharded(axis=0)> {
  return %x : !kina.tensor<4x4xf32, @sharded(axis=0)>
}
func.func @main(%h: !kina.tensor<4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host> {
  %d = kina.reshard %h : !kina.tensor<4x4xf32, @host> -> !kina.tensor<4x4xf32, @sharded(axis=0)>
  %r = call @callee(%d) : (!kina.tensor<4x4xf32, @sharded(axis=0)>) -> !kina.tensor<4x4xf32, @sharded(axis=0)>
  %b = kina.reshard %r : !kina.tensor<4x4xf32, @sharded(axis=0)> -> !kina.tensor<4x4xf32, @host>
  return %b : !kina.tensor<4x4xf32, @host>
}

// -----

kina.mesh @mesh [x = 2]

func.func @undecided(%x: !kina.tensor<4x4xf32, @replicated>) -> !kina.tensor<4x4xf32, @replicated> {
  // expected-error @below {{a placement is not decided: run --kina-propagate-sharding before partitioning}}
  %n = kina.neg %x : (!kina.tensor<4x4xf32, @replicated>) -> !kina.tensor<4x4xf32, @auto>
  %r = kina.reshard %n : !kina.tensor<4x4xf32, @auto> -> !kina.tensor<4x4xf32, @replicated>
  return %r : !kina.tensor<4x4xf32, @replicated>
}
