// RUN: kina-opt %s --kina-approximate-math | FileCheck %s

// tanh and exp become arithmetic (no libm call left), behind a NaN check
// that returns the operand when it is NaN.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-DAG: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-DAG: arith.select %[[NAN]], %[[X]], %{{.*}} : f32
// CHECK: return
func.func @f(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  %e = math.exp %t : f32
  return %e : f32
}
