// RUN: kina-opt %s --kina-to-linalg | FileCheck %s --implicit-check-not=kina. --implicit-check-not=cf.assert
// RUN: kina-opt %s --kina-to-linalg | %stock-mlir-opt > /dev/null

// The read uses the clamped id; a reduction says whether all ids were in
// range, and the function returns it as an extra i1 (no assert is left).
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[T:.*]]: tensor<8x4xf32>, %[[IDS:.*]]: tensor<1x4xi64>) -> (tensor<1x4x4xf32>, i1)
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[IDS]] : tensor<1x4xi64>) outs(%{{.*}} : tensor<1x4x4xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[LAST:.*]] = arith.constant 7 : i64
// CHECK: %[[LO:.*]] = arith.maxsi %[[ID]], %[[ZERO]]
// CHECK: %[[CL:.*]] = arith.minsi %[[LO]], %[[LAST]]
// CHECK: %[[ROW:.*]] = arith.index_cast %[[CL]] : i64 to index
// CHECK: %[[COL:.*]] = linalg.index 2
// CHECK: tensor.extract %[[T]][%[[ROW]], %[[COL]]]
// CHECK: %[[ALL:.*]] = linalg.reduce ins(%[[IDS]] : tensor<1x4xi64>) outs(%{{.*}} : tensor<i1>) dimensions = [0, 1]
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: %[[OK:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK: return %[[G]], %[[OK]] : tensor<1x4x4xf32>, i1
func.func @gather(%t: !kina.tensor<8x4xf32, @host>, %ids: !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host> {
  %0 = kina.gather %t [%ids] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host>
  return %0 : !kina.tensor<1x4x4xf32, @host>
}

// Callers of a gathering function return the status too, combined with
// their own checks.
// CHECK-LABEL: func.func @caller
// CHECK-SAME: -> (tensor<1x4x4xf32>, i1)
// CHECK: %[[R:.*]]:2 = call @gather(
// CHECK: %[[OWN:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: %[[BOTH:.*]] = arith.andi %[[R]]#1, %[[OWN]] : i1
// CHECK: return %{{.*}}, %[[BOTH]]
func.func @caller(%t: !kina.tensor<8x4xf32, @host>, %ids: !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host> {
  %0 = call @gather(%t, %ids) : (!kina.tensor<8x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host>
  %1 = kina.gather %t [%ids] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x4xf32, @host>
  %2 = kina.add %0, %1 : !kina.tensor<1x4x4xf32, @host>
  return %2 : !kina.tensor<1x4x4xf32, @host>
}

// A function that never gathers keeps its signature.
// CHECK-LABEL: func.func @no_gather
// CHECK-SAME: -> tensor<4xf32>
func.func @no_gather(%x: !kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host> {
  return %x : !kina.tensor<4xf32, @host>
}

// A rank-0 id is checked without a reduction.
// CHECK-LABEL: func.func @scalar_id
// CHECK-SAME: -> (tensor<4xf32>, i1)
// CHECK-NOT: linalg.reduce
// CHECK: return
func.func @scalar_id(%t: !kina.tensor<8x4xf32, @host>, %id: !kina.tensor<i32, @host>) -> !kina.tensor<4xf32, @host> {
  %0 = kina.gather %t [%id] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<i32, @host>) -> !kina.tensor<4xf32, @host>
  return %0 : !kina.tensor<4xf32, @host>
}
