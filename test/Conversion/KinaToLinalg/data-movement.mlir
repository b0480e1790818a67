// RUN: kina-opt %s --kina-to-linalg --split-input-file | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-linalg --split-input-file | %stock-mlir-opt --split-input-file > /dev/null

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>) -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 2] [4, 3] [1, 1] : tensor<4x8xf32> to tensor<4x3xf32>
// CHECK: return %[[S]]
func.func @slice(%x: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x3xf32, @host> {
  %0 = kina.slice %x [axis = 1, start = 2, stop = 5] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x3xf32, @host>
  return %0 : !kina.tensor<4x3xf32, @host>
}

// -----

// Static concat: insert_slice into an empty tensor, at running offsets.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x4xf32>, %[[B:.*]]: tensor<1x4x2xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x10xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0, 0] [1, 4, 4] [1, 1, 1]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 0, 4] [1, 4, 2] [1, 1, 1]
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[A]] into %[[I1]][0, 0, 6] [1, 4, 4] [1, 1, 1]
// CHECK: return %[[I2]]
func.func @concat(%a: !kina.tensor<1x4x4xf32, @host>, %b: !kina.tensor<1x4x2xf32, @host>) -> !kina.tensor<1x4x10xf32, @host> {
  %0 = kina.concat %a, %b, %a [axis = 2] : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x2xf32, @host>, !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<1x4x10xf32, @host>
  return %0 : !kina.tensor<1x4x10xf32, @host>
}

// -----

// Adding leading dims is a generic reading the operand without them (a
// generic, not linalg.broadcast: elementwise fusion reads it in place).
// CHECK-DAG: #[[LEAD:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @broadcast_leading
// CHECK: linalg.generic {indexing_maps = [#[[LEAD]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<2x4x4xf32>)
func.func @broadcast_leading(%x: !kina.tensor<4x4xf32, @host>) -> !kina.tensor<2x4x4xf32, @host> {
  %0 = kina.broadcast %x to [2, 4, 4] : !kina.tensor<4x4xf32, @host> -> !kina.tensor<2x4x4xf32, @host>
  return %0 : !kina.tensor<2x4x4xf32, @host>
}

// -----

// A scalar broadcasts to every dim.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @broadcast_scalar
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #{{.*}}], {{.*}}} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<2x3xf32>)
func.func @broadcast_scalar(%x: !kina.tensor<f32, @host>) -> !kina.tensor<2x3xf32, @host> {
  %0 = kina.broadcast %x to [2, 3] : !kina.tensor<f32, @host> -> !kina.tensor<2x3xf32, @host>
  return %0 : !kina.tensor<2x3xf32, @host>
}

// -----

// Stretching a size-1 dim reads its index 0.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast_stretch
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<1x4xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
func.func @broadcast_stretch(%x: !kina.tensor<1x4xf32, @host>) -> !kina.tensor<2x3x4xf32, @host> {
  %0 = kina.broadcast %x to [2, 3, 4] : !kina.tensor<1x4xf32, @host> -> !kina.tensor<2x3x4xf32, @host>
  return %0 : !kina.tensor<2x3x4xf32, @host>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x4x2x2xf32>) outs(%{{.*}} : tensor<1x2x2x4xf32>) permutation = [0, 2, 3, 1]
func.func @transpose(%x: !kina.tensor<1x4x2x2xf32, @host>) -> !kina.tensor<1x2x2x4xf32, @host> {
  %0 = kina.transpose %x perm [0, 2, 3, 1] : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x2x2x4xf32, @host>
  return %0 : !kina.tensor<1x2x2x4xf32, @host>
}

// -----

// A reshape that splits or merges dims is one expand or collapse: a view.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 2, 2] : tensor<1x4x4xf32> into tensor<1x4x2x2xf32>
// CHECK: return %[[E]]
func.func @reshape(%x: !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<1x4x2x2xf32, @host> {
  %0 = kina.reshape %x to [1, 4, 2, 2] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
  return %0 : !kina.tensor<1x4x2x2xf32, @host>
}

// -----

// CHECK-LABEL: func.func @reshape_merge
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x4x4xf32> into tensor<4x4xf32>
func.func @reshape_merge(%x: !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<4x4xf32, @host> {
  %0 = kina.reshape %x to [4, 4] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<4x4xf32, @host>
  return %0 : !kina.tensor<4x4xf32, @host>
}

// -----

// Dims that do not group ([2, 3] -> [3, 2]) go through one flat dim; still
// views of one contiguous buffer.
// CHECK-LABEL: func.func @reshape_regroup
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[\[}}0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
func.func @reshape_regroup(%x: !kina.tensor<2x3xf32, @host>) -> !kina.tensor<3x2xf32, @host> {
  %0 = kina.reshape %x to [3, 2] : !kina.tensor<2x3xf32, @host> -> !kina.tensor<3x2xf32, @host>
  return %0 : !kina.tensor<3x2xf32, @host>
}

// -----

// CHECK-LABEL: func.func @reshape_to_scalar
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @reshape_to_scalar(%x: !kina.tensor<1x1xf32, @host>) -> !kina.tensor<f32, @host> {
  %0 = kina.reshape %x to [] : !kina.tensor<1x1xf32, @host> -> !kina.tensor<f32, @host>
  return %0 : !kina.tensor<f32, @host>
}
