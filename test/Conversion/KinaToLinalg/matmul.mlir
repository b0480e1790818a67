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
