// RUN: kina-opt %s --kina-to-linalg | FileCheck %s --implicit-check-not=kina. --implicit-check-not=cf.assert
// RUN: kina-opt %s --kina-to-linalg | %stock-mlir-opt > /dev/null

// Over the flattened ids and updates, in order, each update row is added
// at its clamped id into a zero table: two loops (the rows written depend
// on the data, so no linalg op can say it). Whether every id was in range
// is the extra i1 result, as for gather.
// CHECK-LABEL: func.func @scatter_add
// CHECK-SAME: (%[[U:.*]]: tensor<1x3x4xf32>, %[[IDS:.*]]: tensor<1x3xi64>) -> (tensor<8x4xf32>, i1)
// CHECK: %[[ALL:.*]] = linalg.reduce ins(%[[IDS]] : tensor<1x3xi64>)
// CHECK: %[[OK:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK-DAG: %[[FLATIDS:.*]] = tensor.collapse_shape %[[IDS]] {{\[\[}}0, 1]] : tensor<1x3xi64> into tensor<3xi64>
// CHECK-DAG: %[[FLATU:.*]] = tensor.collapse_shape %[[U]] {{\[\[}}0, 1, 2]] : tensor<1x3x4xf32> into tensor<12xf32>
// CHECK-DAG: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[ROWS:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T:.*]] = %[[ZERO]]) -> (tensor<32xf32>)
// CHECK: %[[ID:.*]] = tensor.extract %[[FLATIDS]][%[[I]]] : tensor<3xi64>
// CHECK: arith.maxsi %[[ID]]
// CHECK: arith.minsi
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ROW:.*]] = %[[T]]) -> (tensor<32xf32>)
// CHECK: %[[OLD:.*]] = tensor.extract %[[ROW]]
// CHECK: %[[NEW:.*]] = tensor.extract %[[FLATU]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK: tensor.insert %[[SUM]] into %[[ROW]]
// CHECK: %[[TABLE:.*]] = tensor.expand_shape %[[ROWS]] {{\[\[}}0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
// CHECK: return %[[TABLE]], %[[OK]] : tensor<8x4xf32>, i1
func.func @scatter_add(%u: !kina.tensor<1x3x4xf32, @host>, %ids: !kina.tensor<1x3xi64, @host>) -> !kina.tensor<8x4xf32, @host> {
  %0 = kina.scatter_add %u [%ids] [rows = 8] : (!kina.tensor<1x3x4xf32, @host>, !kina.tensor<1x3xi64, @host>) -> !kina.tensor<8x4xf32, @host>
  return %0 : !kina.tensor<8x4xf32, @host>
}

// A rank-0 id and a rank-1 table: one row of one element.
// CHECK-LABEL: func.func @scalar_id
// CHECK-SAME: -> (tensor<5xf32>, i1)
// CHECK: scf.for
// CHECK: return
func.func @scalar_id(%u: !kina.tensor<f32, @host>, %id: !kina.tensor<i32, @host>) -> !kina.tensor<5xf32, @host> {
  %0 = kina.scatter_add %u [%id] [rows = 5] : (!kina.tensor<f32, @host>, !kina.tensor<i32, @host>) -> !kina.tensor<5xf32, @host>
  return %0 : !kina.tensor<5xf32, @host>
}
