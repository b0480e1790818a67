// RUN: kina-opt %s --kina-to-linalg | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-linalg | %stock-mlir-opt > /dev/null

// Numerically stable: subtract the max along the axis before exp.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[MAXINIT]] : tensor<2x4xf32>) dimensions = [1]
// CHECK: arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[ID]]], {{.*}}} ins(%[[X]], %[[MAX]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: %[[D:.*]] = arith.subf
// CHECK: math.exp %[[D]]
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[E]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x4xf32>) dimensions = [1]
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[ID]]], {{.*}}} ins(%[[E]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: arith.divf
// CHECK: return %[[P]]
func.func @softmax(%x: !kina.tensor<2x3x4xf32, @host>) -> !kina.tensor<2x3x4xf32, @host> {
  %0 = kina.softmax %x [axis = 1] : !kina.tensor<2x3x4xf32, @host>
  return %0 : !kina.tensor<2x3x4xf32, @host>
}
