// RUN: kina-opt %s --kina-to-linalg --split-input-file | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-linalg --split-input-file | %stock-mlir-opt --split-input-file > /dev/null

// CHECK-LABEL: func.func @rank2
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3x8xf32>) outs(%[[Z]] : tensor<4x8xf32>)
func.func @rank2(%a: !kina.tensor<4x3xf32, @host>, %b: !kina.tensor<3x8xf32, @host>) -> !kina.tensor<4x8xf32, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<4x3xf32, @host>, !kina.tensor<3x8xf32, @host>) -> !kina.tensor<4x8xf32, @host>
  return %0 : !kina.tensor<4x8xf32, @host>
}

// -----

// CHECK-LABEL: func.func @rank3
// CHECK-NOT: collapse_shape
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x3xf32>, tensor<2x3x8xf32>) outs(%{{.*}} : tensor<2x4x8xf32>)
func.func @rank3(%a: !kina.tensor<2x4x3xf32, @host>, %b: !kina.tensor<2x3x8xf32, @host>) -> !kina.tensor<2x4x8xf32, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<2x4x3xf32, @host>, !kina.tensor<2x3x8xf32, @host>) -> !kina.tensor<2x4x8xf32, @host>
  return %0 : !kina.tensor<2x4x8xf32, @host>
}

// -----

// Batch dims collapse into one for linalg.batch_matmul and expand back.
// CHECK-LABEL: func.func @rank4
// CHECK: %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x3x4x2xf32> into tensor<6x4x2xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x3x2x5xf32> into tensor<6x2x5xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<6x4x2xf32>, tensor<6x2x5xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 4, 5] : tensor<6x4x5xf32> into tensor<2x3x4x5xf32>
func.func @rank4(%a: !kina.tensor<2x3x4x2xf32, @host>, %b: !kina.tensor<2x3x2x5xf32, @host>) -> !kina.tensor<2x3x4x5xf32, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<2x3x4x2xf32, @host>, !kina.tensor<2x3x2x5xf32, @host>) -> !kina.tensor<2x3x4x5xf32, @host>
  return %0 : !kina.tensor<2x3x4x5xf32, @host>
}

// -----

// x @ broadcast(w): the batch folds into M and w is used as it is; the
// broadcast copy of w is dead and dropped.
// CHECK-LABEL: func.func @shared_rhs
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x5xf32>, %[[W:.*]]: tensor<5x7xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]] : tensor<2x3x4x5xf32> into tensor<24x5xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[X2]], %[[W]] : tensor<24x5xf32>, tensor<5x7xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [2, 3, 4, 7] : tensor<24x7xf32> into tensor<2x3x4x7xf32>
func.func @shared_rhs(%x: !kina.tensor<2x3x4x5xf32, @host>, %w: !kina.tensor<5x7xf32, @host>) -> !kina.tensor<2x3x4x7xf32, @host> {
  %wb = kina.broadcast %w to [2, 3, 5, 7] : !kina.tensor<5x7xf32, @host> -> !kina.tensor<2x3x5x7xf32, @host>
  %0 = kina.matmul %x, %wb : (!kina.tensor<2x3x4x5xf32, @host>, !kina.tensor<2x3x5x7xf32, @host>) -> !kina.tensor<2x3x4x7xf32, @host>
  return %0 : !kina.tensor<2x3x4x7xf32, @host>
}

// -----

// The backward's c @ broadcast(w)^T: the transpose moves under the
// broadcast, so the product folds as the forward's does; only w's own
// transpose is made, never a copy of w per batch.
// CHECK-LABEL: func.func @shared_rhs_transposed
// CHECK-SAME: (%[[C:.*]]: tensor<1x4x7xf32>, %[[W:.*]]: tensor<5x7xf32>)
// CHECK-NOT: linalg.broadcast
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<5x7xf32>) outs(%{{.*}} : tensor<7x5xf32>) permutation = [1, 0]
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1], [2]] : tensor<1x4x7xf32> into tensor<4x7xf32>
// CHECK: linalg.matmul ins(%[[C2]], %[[WT]] : tensor<4x7xf32>, tensor<7x5xf32>)
// CHECK-NOT: linalg.transpose
func.func @shared_rhs_transposed(%c: !kina.tensor<1x4x7xf32, @host>, %w: !kina.tensor<5x7xf32, @host>) -> !kina.tensor<1x4x5xf32, @host> {
  %wb = kina.broadcast %w to [1, 5, 7] : !kina.tensor<5x7xf32, @host> -> !kina.tensor<1x5x7xf32, @host>
  %wt = kina.transpose %wb perm [0, 2, 1] : !kina.tensor<1x5x7xf32, @host> -> !kina.tensor<1x7x5xf32, @host>
  %0 = kina.matmul %c, %wt : (!kina.tensor<1x4x7xf32, @host>, !kina.tensor<1x7x5xf32, @host>) -> !kina.tensor<1x4x5xf32, @host>
  return %0 : !kina.tensor<1x4x5xf32, @host>
}

// -----

// A backward's weight gradient, x^T @ c per batch summed over the batch:
// one product over all B * T rows; no batched product, no sum over B.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x5xf32>, %[[C:.*]]: tensor<2x4x7xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK-DAG: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x4x5xf32> into tensor<8x5xf32>
// CHECK-DAG: %[[C2:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1], [2]] : tensor<2x4x7xf32> into tensor<8x7xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X2]] : tensor<8x5xf32>) outs(%{{.*}} : tensor<5x8xf32>) permutation = [1, 0]
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[XT]], %[[C2]] : tensor<5x8xf32>, tensor<8x7xf32>)
// CHECK-NOT: linalg.reduce
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2]] output_shape [1, 5, 7] : tensor<5x7xf32> into tensor<1x5x7xf32>
func.func @weight_gradient(%x: !kina.tensor<2x4x5xf32, @host>, %c: !kina.tensor<2x4x7xf32, @host>) -> !kina.tensor<1x5x7xf32, @host> {
  %xt = kina.transpose %x perm [0, 2, 1] : !kina.tensor<2x4x5xf32, @host> -> !kina.tensor<2x5x4xf32, @host>
  %p = kina.matmul %xt, %c : (!kina.tensor<2x5x4xf32, @host>, !kina.tensor<2x4x7xf32, @host>) -> !kina.tensor<2x5x7xf32, @host>
  %s = kina.sum %p[axis = 0] : (!kina.tensor<2x5x7xf32, @host>) -> !kina.tensor<1x5x7xf32, @host>
  return %s : !kina.tensor<1x5x7xf32, @host>
}
