// RUN: kina-opt %s --kina-to-linalg | FileCheck %s

// Per-device collectives become calls of the runtime on buffer addresses,
// with the layout and the group as numbers: on mesh [rows = 3, cols = 2],
// axis `rows` has stride 2 (devices 0, 2, 4 form a group), `cols` stride 1.
kina.mesh @mesh [rows = 3, cols = 2]

// all_gather: the result is made at the function's entry, with this
// device's offset on the axis (its coordinate times the local size); the
// input goes in there, and the runtime fills in the others' blocks.
// CHECK-LABEL: func.func @gather_cols
// CHECK-SAME: (%[[X:.*]]: tensor<5x3x7xf32>) -> tensor<5x6x7xf32>
func.func @gather_cols(%x: !kina.tensor<5x3x7xf32, @local>) -> !kina.tensor<5x6x7xf32, @local> {
  // CHECK-DAG: %[[SIZE:.*]] = arith.constant 2 : i64
  // CHECK-DAG: %[[STRIDE:.*]] = arith.constant 1 : i64
  // CHECK: %[[COORD:.*]] = call @kina_collective_coordinate(%[[SIZE]], %[[STRIDE]]) : (i64, i64) -> i64
  // CHECK: %[[C:.*]] = arith.index_cast %[[COORD]] : i64 to index
  // CHECK: %[[LOCAL:.*]] = arith.constant 3 : index
  // CHECK: %[[OFFSET:.*]] = arith.muli %[[C]], %[[LOCAL]]
  // CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<5x6x7xf32>
  // CHECK: %[[PLACED:.*]] = tensor.insert_slice %[[X]] into %[[EMPTY]][0, %[[OFFSET]], 0] [5, 3, 7] [1, 1, 1]
  // CHECK: %[[OUT:.*]] = bufferization.to_buffer %[[PLACED]] : tensor<5x6x7xf32> to memref<5x6x7xf32>
  // CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
  // CHECK: %[[A:.*]] = arith.index_cast %[[ADDRESS]] : index to i64
  // CHECK-DAG: %[[OUTER:.*]] = arith.constant 5 : i64
  // CHECK-DAG: %[[BLOCK:.*]] = arith.constant 84 : i64
  // CHECK-DAG: %[[SIZE2:.*]] = arith.constant 2 : i64
  // CHECK-DAG: %[[STRIDE2:.*]] = arith.constant 1 : i64
  // CHECK: call @kina_collective_all_gather(%[[A]], %[[OUTER]], %[[BLOCK]], %[[SIZE2]], %[[STRIDE2]])
  // CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
  // CHECK: return %[[R]]
  %g = kina.all_gather %x[axis = 1, over = "cols"] : !kina.tensor<5x3x7xf32, @local> -> !kina.tensor<5x6x7xf32, @local>
  return %g : !kina.tensor<5x6x7xf32, @local>
}

// An input that a reshape only gave unit dims is gathered before the
// reshape (a kina-level rewrite before the lowering, PrepareForLinalg.cpp),
// where its producer's fresh tensor can be found; the reshape follows.
// CHECK-LABEL: func.func @gather_reshaped
func.func @gather_reshaped(%x: !kina.tensor<4x3xf32, @local>) -> !kina.tensor<1x4x6xf32, @local> {
  // CHECK: %[[M:.*]] = linalg.generic
  // CHECK-NOT: tensor.expand_shape
  // CHECK: %[[IN:.*]] = tensor.insert_slice %[[M]] into %{{.*}}[0, %{{.*}}] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  // CHECK: %[[OUT:.*]] = bufferization.to_buffer %[[IN]]
  // CHECK: call @kina_collective_all_gather
  // CHECK: %[[G:.*]] = bufferization.to_tensor %[[OUT]]
  // CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2]] output_shape [1, 4, 6] : tensor<4x6xf32> into tensor<1x4x6xf32>
  %e = kina.exp %x : !kina.tensor<4x3xf32, @local>
  %r = kina.reshape %e to [1, 4, 3] : !kina.tensor<4x3xf32, @local> -> !kina.tensor<1x4x3xf32, @local>
  %g = kina.all_gather %r[axis = 2, over = "cols"] : !kina.tensor<1x4x3xf32, @local> -> !kina.tensor<1x4x6xf32, @local>
  return %g : !kina.tensor<1x4x6xf32, @local>
}

// On the unit dim itself: the devices' [4, 3] blocks stacked on axis 0
// are the same bytes as the source gathered on its axis 0.
// CHECK-LABEL: func.func @gather_on_unit_dim
func.func @gather_on_unit_dim(%x: !kina.tensor<4x3xf32, @local>) -> !kina.tensor<2x4x3xf32, @local> {
  // CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<8x3xf32>
  // CHECK: call @kina_collective_all_gather
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 4, 3] : tensor<8x3xf32> into tensor<2x4x3xf32>
  %e = kina.exp %x : !kina.tensor<4x3xf32, @local>
  %r = kina.reshape %e to [1, 4, 3] : !kina.tensor<4x3xf32, @local> -> !kina.tensor<1x4x3xf32, @local>
  %g = kina.all_gather %r[axis = 0, over = "cols"] : !kina.tensor<1x4x3xf32, @local> -> !kina.tensor<2x4x3xf32, @local>
  return %g : !kina.tensor<2x4x3xf32, @local>
}

// A trailing unit dim has no dim of the source after it: the reshaped
// value is gathered as it is.
// CHECK-LABEL: func.func @gather_on_trailing_unit_dim
func.func @gather_on_trailing_unit_dim(%x: !kina.tensor<4x3xf32, @local>) -> !kina.tensor<4x3x2xf32, @local> {
  // CHECK: %[[E:.*]] = tensor.expand_shape
  // CHECK: tensor.insert_slice %[[E]] into %{{.*}}[0, 0, %{{.*}}] [4, 3, 1] [1, 1, 1] : tensor<4x3x1xf32> into tensor<4x3x2xf32>
  // CHECK-NOT: tensor.expand_shape
  // CHECK: return
  %e = kina.exp %x : !kina.tensor<4x3xf32, @local>
  %r = kina.reshape %e to [4, 3, 1] : !kina.tensor<4x3xf32, @local> -> !kina.tensor<4x3x1xf32, @local>
  %g = kina.all_gather %r[axis = 2, over = "cols"] : !kina.tensor<4x3x1xf32, @local> -> !kina.tensor<4x3x2xf32, @local>
  return %g : !kina.tensor<4x3x2xf32, @local>
}

// CHECK-LABEL: func.func @sum_rows
func.func @sum_rows(%x: !kina.tensor<3x5xi64, @local>) -> !kina.tensor<3x5xi64, @local> {
  // count 15, dtype i64 (2), sum (0), 3 devices 2 apart
  // CHECK-DAG: %[[COUNT:.*]] = arith.constant 15 : i64
  // CHECK-DAG: %[[I64:.*]] = arith.constant 2 : i64
  // CHECK-DAG: %[[SUM:.*]] = arith.constant 0 : i64
  // CHECK-DAG: %[[SIZE:.*]] = arith.constant 3 : i64
  // CHECK-DAG: %[[STRIDE:.*]] = arith.constant 2 : i64
  // CHECK: call @kina_collective_all_reduce(%{{.*}}, %{{.*}}, %[[COUNT]], %[[I64]], %[[SUM]], %[[SIZE]], %[[STRIDE]])
  %s = kina.all_reduce %x[kind = sum, over = "rows"] : !kina.tensor<3x5xi64, @local> -> !kina.tensor<3x5xi64, @local>
  return %s : !kina.tensor<3x5xi64, @local>
}

// CHECK-LABEL: func.func @scatter_and_move
func.func @scatter_and_move(%x: !kina.tensor<4x4xf32, @local>) -> !kina.tensor<6x1xf32, @local> {
  // reduce_scatter on axis 1 over cols: 4 rows of 2 f32 per member
  // CHECK: call @kina_collective_reduce_scatter(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64, i64, i64) -> ()
  %s = kina.reduce_scatter %x[axis = 1, over = "cols"] : !kina.tensor<4x4xf32, @local> -> !kina.tensor<4x2xf32, @local>
  // all_to_all, one runtime call: the input seen on its `to` axis as
  // [4 rows][2 members][4 bytes], the result on its `from` axis as
  // [1][2 members][16 bytes], on `cols` (2 devices, stride 1)
  // CHECK-DAG: %[[TO_OUTER:.*]] = arith.constant 4 : i64
  // CHECK-DAG: %[[TO_BLOCK:.*]] = arith.constant 4 : i64
  // CHECK-DAG: %[[FROM_OUTER:.*]] = arith.constant 1 : i64
  // CHECK-DAG: %[[FROM_BLOCK:.*]] = arith.constant 16 : i64
  // CHECK-DAG: %[[MEMBERS:.*]] = arith.constant 2 : i64
  // CHECK: call @kina_collective_all_to_all(%{{.*}}, %{{.*}}, %[[TO_OUTER]], %[[TO_BLOCK]], %[[FROM_OUTER]], %[[FROM_BLOCK]], %[[MEMBERS]], %{{.*}})
  %t = kina.all_to_all %s[from = 0, to = 1, over = "cols"] : !kina.tensor<4x2xf32, @local> -> !kina.tensor<8x1xf32, @local>
  %u = kina.slice %t[axis = 0, start = 0, stop = 6] : !kina.tensor<8x1xf32, @local> -> !kina.tensor<6x1xf32, @local>
  return %u : !kina.tensor<6x1xf32, @local>
}

// permute: one runtime call on the input's and a fresh buffer's
// addresses, with the block's bytes, the shift, whether it wraps, and the
// group (rows: 3 devices, stride 2).
// CHECK-LABEL: func.func @shift_rows
// CHECK-DAG: %[[BYTES:.*]] = arith.constant 48 : i64
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[WRAP:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[STRIDE:.*]] = arith.constant 2 : i64
// CHECK: call @kina_collective_permute(%{{.*}}, %{{.*}}, %[[BYTES]], %[[SHIFT]], %[[WRAP]], %[[SIZE]], %[[STRIDE]])
func.func @shift_rows(%x: !kina.tensor<4x3xf32, @local>) -> !kina.tensor<4x3xf32, @local> {
  %p = kina.permute %x[shift = -1, over = "rows", cyclic] : !kina.tensor<4x3xf32, @local> -> !kina.tensor<4x3xf32, @local>
  return %p : !kina.tensor<4x3xf32, @local>
}

// One declaration per runtime function, on i64s; no mesh is left.
// CHECK-NOT: kina.mesh
// CHECK-DAG: func.func private @kina_collective_coordinate(i64, i64) -> i64
// CHECK-DAG: func.func private @kina_collective_all_gather(i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @kina_collective_all_to_all(i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @kina_collective_permute(i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @kina_collective_all_reduce(i64, i64, i64, i64, i64, i64, i64)
