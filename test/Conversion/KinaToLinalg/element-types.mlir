// RUN: kina-opt %s --kina-to-linalg | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-linalg | %stock-mlir-opt > /dev/null

// A bf16 product: both operands widened with K's pairs swapped (the order
// vdpbf16ps adds them: element 2i + 1, then 2i), an f32 matmul over the
// widened K, one rounding.
// CHECK-DAG: #[[LHS_PAIRS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, -d2 + 1)>
// CHECK-DAG: #[[RHS_PAIRS:.*]] = affine_map<(d0, d1, d2) -> (d0, -d1 + 1, d2)>
// CHECK-LABEL: func.func @bf16_matmul
// CHECK: %[[A2:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [2, 2, 2] : tensor<2x4xbf16> into tensor<2x2x2xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[LHS_PAIRS]], {{.*}}]{{.*}} ins(%[[A2]] : tensor<2x2x2xbf16>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[A:.*]] = tensor.collapse_shape {{.*}} into tensor<2x4xf32>
// CHECK: %[[B2:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 2, 3] : tensor<4x3xbf16> into tensor<2x2x3xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[RHS_PAIRS]], {{.*}}]{{.*}} ins(%[[B2]] : tensor<2x2x3xbf16>)
// CHECK: %[[B:.*]] = tensor.collapse_shape {{.*}} into tensor<4x3xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<2x4xf32>, tensor<4x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<2x3xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16_matmul(%a: !kina.tensor<2x4xbf16, @host>, %b: !kina.tensor<4x3xbf16, @host>) -> !kina.tensor<2x3xbf16, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<2x4xbf16, @host>, !kina.tensor<4x3xbf16, @host>) -> !kina.tensor<2x3xbf16, @host>
  return %0 : !kina.tensor<2x3xbf16, @host>
}

// An odd K is padded with a zero, so its last element pairs with 0: in
// f32, once widened (a copy of bf16 elements would need a conversion
// libcall under AddressSanitizer).
// CHECK-LABEL: func.func @bf16_matmul_odd_k
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, 1]
// CHECK: } : tensor<2x3xf32> to tensor<2x4xf32>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: tensor.pad %{{.*}} low[0, 0] high[1, 0]
// CHECK: } : tensor<3x5xf32> to tensor<4x5xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x5xf32>)
func.func @bf16_matmul_odd_k(%a: !kina.tensor<2x3xbf16, @host>, %b: !kina.tensor<3x5xbf16, @host>) -> !kina.tensor<2x5xbf16, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<2x3xbf16, @host>, !kina.tensor<3x5xbf16, @host>) -> !kina.tensor<2x5xbf16, @host>
  return %0 : !kina.tensor<2x5xbf16, @host>
}

// An f16 product widens in K's order.
// CHECK-LABEL: func.func @f16_matmul
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x5xf32>)
func.func @f16_matmul(%a: !kina.tensor<2x3xf16, @host>, %b: !kina.tensor<3x5xf16, @host>) -> !kina.tensor<2x5xf16, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<2x3xf16, @host>, !kina.tensor<3x5xf16, @host>) -> !kina.tensor<2x5xf16, @host>
  return %0 : !kina.tensor<2x5xf16, @host>
}

// An f16 sum accumulates in f32 and rounds once.
// CHECK-LABEL: func.func @f16_sum
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.reduce ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16_sum(%x: !kina.tensor<2x3xf16, @host>) -> !kina.tensor<2x1xf16, @host> {
  %0 = kina.sum %x [axis = 1] : (!kina.tensor<2x3xf16, @host>) -> !kina.tensor<2x1xf16, @host>
  return %0 : !kina.tensor<2x1xf16, @host>
}

// f64 to bf16 goes through f32 rounded to odd: to nearest, then the odd
// neighbour toward the operand where that was inexact and even.
// CHECK-LABEL: func.func @f64_to_bf16
// CHECK: %[[N:.*]] = arith.truncf %[[X:.*]] : f64 to f32
// CHECK: %[[B:.*]] = arith.extf %[[N]] : f32 to f64
// CHECK: arith.cmpf one, %[[B]], %[[X]] : f64
// CHECK: arith.bitcast %[[N]] : f32 to i32
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %[[ODD]] : f32 to bf16
func.func @f64_to_bf16(%x: !kina.tensor<4xf64, @host>) -> !kina.tensor<4xbf16, @host> {
  %0 = kina.cast %x to bf16 : !kina.tensor<4xf64, @host> -> !kina.tensor<4xbf16, @host>
  return %0 : !kina.tensor<4xbf16, @host>
}

// The math functions of a 16-bit float run in f32, rounded once.
// CHECK-LABEL: func.func @bf16_tanh
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[T:.*]] = math.tanh %[[W]] : f32
// CHECK: arith.truncf %[[T]] : f32 to bf16
func.func @bf16_tanh(%x: !kina.tensor<4xbf16, @host>) -> !kina.tensor<4xbf16, @host> {
  %0 = kina.tanh %x : !kina.tensor<4xbf16, @host>
  return %0 : !kina.tensor<4xbf16, @host>
}
