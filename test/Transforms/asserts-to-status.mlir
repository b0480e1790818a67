// RUN: kina-opt %s --kina-asserts-to-status --split-input-file --verify-diagnostics | FileCheck %s --implicit-check-not=cf.assert

// Each function's asserts, in order, and its callees' statuses become one
// extra, last i1 result; callers of such functions take it up too, and a
// function with neither keeps its signature.
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[A:[^:]*]]: i1, %[[B:[^:]*]]: i1) -> (tensor<4xf32>, i1)
// CHECK: %[[BOTH:.*]] = arith.andi %[[A]], %[[B]] : i1
// CHECK: return %[[X]], %[[BOTH]] : tensor<4xf32>, i1
func.func @checks(%x: tensor<4xf32>, %a: i1, %b: i1) -> tensor<4xf32> {
  cf.assert %a, "first"
  cf.assert %b, "second"
  return %x : tensor<4xf32>
}
// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[CX:[^:]*]]: tensor<4xf32>, %[[CA:[^:]*]]: i1, %[[OWN:[^:]*]]: i1) -> (tensor<4xf32>, i1)
// CHECK: %[[R:.*]]:2 = call @checks(%[[CX]], %[[CA]], %[[CA]]) : (tensor<4xf32>, i1, i1) -> (tensor<4xf32>, i1)
// CHECK: %[[ALL:.*]] = arith.andi %[[R]]#1, %[[OWN]] : i1
// CHECK: return %[[R]]#0, %[[ALL]]
func.func @caller(%x: tensor<4xf32>, %a: i1, %own: i1) -> tensor<4xf32> {
  %0 = call @checks(%x, %a, %a) : (tensor<4xf32>, i1, i1) -> tensor<4xf32>
  cf.assert %own, "own"
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @unchecked
// CHECK-SAME: -> tensor<4xf32>
func.func @unchecked(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A caller defined before its callee is rewritten all the same.
// CHECK-LABEL: func.func @early
// CHECK: %[[R:.*]]:2 = call @late
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @early(%x: tensor<4xf32>, %a: i1) -> tensor<4xf32> {
  %0 = call @late(%x, %a) : (tensor<4xf32>, i1) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @late(%x: tensor<4xf32>, %a: i1) -> tensor<4xf32> {
  cf.assert %a, "late"
  return %x : tensor<4xf32>
}

// -----

func.func @in_loop(%a: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{a run-time check inside a region cannot become a returned status}}
    cf.assert %a, "nested"
  }
  return
}

// -----

func.func @ping(%a: i1) {
  call @pong(%a) : (i1) -> ()
  return
}
func.func @pong(%a: i1) {
  // expected-error @below {{recursive call of 'ping' is not supported}}
  call @ping(%a) : (i1) -> ()
  return
}
