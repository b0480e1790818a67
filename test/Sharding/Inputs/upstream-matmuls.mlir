// Upstream MLIR 22's `shard` dialect on the same two matmuls as
// kina-matmuls.kina: x @ w with w split on its columns (column-parallel)
// and on its rows with x on its columns (row-parallel), the results
// replicated.
shard.grid @grid(shape = 2)

func.func @column(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %split_cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %split_cols : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %replicated = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %r = shard.shard %y to %replicated annotate_for_users : tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

func.func @row(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %split_cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %split_cols : tensor<4x8xf32>
  %split_rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %split_rows : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.matmul ins(%xs, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %replicated = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %r = shard.shard %y to %replicated annotate_for_users : tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
