// RUN: kina-opt %s --kina-to-linalg --split-input-file | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-linalg --split-input-file | %stock-mlir-opt --split-input-file > /dev/null

// CHECK-LABEL: func.func @float_ops
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: arith.negf
func.func @float_ops(%a: !kina.tensor<4xf32, @host>, %b: !kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host> {
  %0 = kina.add %a, %b : !kina.tensor<4xf32, @host>
  %1 = kina.sub %0, %b : !kina.tensor<4xf32, @host>
  %2 = kina.mul %1, %b : !kina.tensor<4xf32, @host>
  %3 = kina.div %2, %b : !kina.tensor<4xf32, @host>
  %4 = kina.neg %3 : !kina.tensor<4xf32, @host>
  return %4 : !kina.tensor<4xf32, @host>
}

// -----

// Integer division is total: the divisor is made safe, x / 0 yields 0.
// CHECK-LABEL: func.func @int_ops
// CHECK: arith.addi
// CHECK: arith.muli
// CHECK: ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[BYZERO:.*]] = arith.cmpi eq, %[[Y]], %{{.*}} : i32
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Y]] : i32
// CHECK: %[[Q:.*]] = arith.divsi %[[X]], %[[SAFE]] : i32
// CHECK: arith.select %[[BYZERO]], %{{.*}}, %[[Q]] : i32
// CHECK: arith.subi
func.func @int_ops(%a: !kina.tensor<4xi32, @host>, %b: !kina.tensor<4xi32, @host>) -> !kina.tensor<4xi32, @host> {
  %0 = kina.add %a, %b : !kina.tensor<4xi32, @host>
  %1 = kina.mul %0, %b : !kina.tensor<4xi32, @host>
  %2 = kina.div %1, %b : !kina.tensor<4xi32, @host>
  %3 = kina.neg %2 : !kina.tensor<4xi32, @host>
  return %3 : !kina.tensor<4xi32, @host>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK: %[[C:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: return %[[C]] : tensor<f32>
func.func @constant() -> !kina.tensor<f32, @host> {
  %0 = kina.constant 5.0e-01 : !kina.tensor<f32, @host>
  return %0 : !kina.tensor<f32, @host>
}

// -----

// Frontend attributes (parameter names, the entry mark) are dropped.
// CHECK-LABEL: func.func @attrs
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
func.func @attrs(%x: !kina.tensor<4xf32, @host> {kina.name = "x"}) -> !kina.tensor<4xf32, @host> attributes {kina.entry} {
  return %x : !kina.tensor<4xf32, @host>
}
