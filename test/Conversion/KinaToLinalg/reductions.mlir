// RUN: kina-opt %s --kina-to-linalg | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-linalg | %stock-mlir-opt > /dev/null

// A reduction is a linalg.reduce, then an expand_shape that puts the axis
// back with size 1.
// CHECK-LABEL: func.func @sum_middle
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>) dimensions = [1]
// CHECK: arith.addf
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [2, 1, 4] : tensor<2x4xf32> into tensor<2x1x4xf32>
// CHECK: return %[[E]]
func.func @sum_middle(%x: !kina.tensor<2x3x4xf32, @host>) -> !kina.tensor<2x1x4xf32, @host> {
  %0 = kina.sum %x [axis = 1] : (!kina.tensor<2x3x4xf32, @host>) -> !kina.tensor<2x1x4xf32, @host>
  return %0 : !kina.tensor<2x1x4xf32, @host>
}

// max starts from -inf and takes maximumf (NaN propagates); axis 0 joins
// the first group.
// CHECK-LABEL: func.func @max_first
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.reduce ins(%{{.*}} : tensor<5x6xf32>) outs(%{{.*}} : tensor<6xf32>) dimensions = [0]
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 6] : tensor<6xf32> into tensor<1x6xf32>
func.func @max_first(%x: !kina.tensor<5x6xf32, @host>) -> !kina.tensor<1x6xf32, @host> {
  %0 = kina.max %x [axis = 0] : (!kina.tensor<5x6xf32, @host>) -> !kina.tensor<1x6xf32, @host>
  return %0 : !kina.tensor<1x6xf32, @host>
}

// mean divides the sum by the axis size; a rank-1 operand reduces to a
// rank-0 tensor, expanded to [1] with no groups.
// CHECK-LABEL: func.func @mean_vector
// CHECK: %[[S:.*]] = linalg.reduce ins(%{{.*}} : tensor<5xf32>) outs(%{{.*}} : tensor<f32>) dimensions = [0]
// CHECK: %[[N:.*]] = arith.constant 5.000000e+00 : f32
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<f32>)
// CHECK: arith.divf %{{.*}}, %[[N]]
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
func.func @mean_vector(%x: !kina.tensor<5xf32, @host>) -> !kina.tensor<1xf32, @host> {
  %0 = kina.mean %x [axis = 0] : (!kina.tensor<5xf32, @host>) -> !kina.tensor<1xf32, @host>
  return %0 : !kina.tensor<1xf32, @host>
}

// Math ops are elementwise generics on the math dialect.
// CHECK-LABEL: func.func @math
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: math.tanh
func.func @math(%x: !kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host> {
  %e = kina.exp %x : !kina.tensor<4xf32, @host>
  %l = kina.log %e : !kina.tensor<4xf32, @host>
  %s = kina.sqrt %l : !kina.tensor<4xf32, @host>
  %r = kina.rsqrt %s : !kina.tensor<4xf32, @host>
  %t = kina.tanh %r : !kina.tensor<4xf32, @host>
  return %t : !kina.tensor<4xf32, @host>
}
