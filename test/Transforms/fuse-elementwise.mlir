// RUN: kina-opt %s --kina-fuse-elementwise | FileCheck %s

// A chain of all-parallel generics (a broadcast bias, an add, a tanh)
// becomes one generic; a reduction is left alone.
// CHECK-LABEL: func.func @chain
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// CHECK: linalg.reduce ins(%[[G]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %bias = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %red = linalg.reduce ins(%t : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %red : tensor<4xf32>
}

// A broadcast scalar (an AdamW coefficient, one tensor that CSE shares
// between every weight of one shape) is recomputed in each of its users:
// no full-size tensor of one repeated number.
// CHECK-LABEL: func.func @shared_scalar
// CHECK-NOT: linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>) outs
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>)
// CHECK: arith.mulf

// A broadcast row with two users is recomputed in the second (a read of
// the row) and fused into the first: each product's loop reads the row,
// and no [4, 8] copy of the row is made.
// CHECK-LABEL: func.func @shared_row
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<4x8xf32>, %[[R:[^:]*]]: tensor<8xf32>)
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[R]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[R]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return %[[X]], %[[Y]]
#scalar = affine_map<(d0, d1) -> ()>
func.func @shared_scalar(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %full = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<f32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %full : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %full : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @shared_row(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %r: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %full = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %full : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %full : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
}

// AdamW's shape: a new moment is a result of the function and an input of
// the new weight. It becomes one loop with the weight, which writes both:
// the gradient and the old moment are read once, the new moment is not
// read back. A producer whose other user comes first stays unfused.
// CHECK-LABEL: func.func @moment_and_weight
// CHECK: %[[STEP:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[M:.*]] = arith.addf
// CHECK: %[[W:.*]] = arith.subf %{{.*}}, %[[M]]
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[STEP]]#{{[01]}}, %[[STEP]]#{{[01]}}
#v = affine_map<(d0) -> (d0)>
func.func @moment_and_weight(%g: tensor<8xf32>, %m: tensor<8xf32>, %w: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %new_m = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%g, %m : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %new_w = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%w, %new_m : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %new_m, %new_w : tensor<8xf32>, tensor<8xf32>
}
// CHECK-LABEL: func.func @used_before
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.reduce ins(%[[P]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[P]] :
func.func @used_before(%a: tensor<8xf32>, %b: tensor<8xf32>, %acc: tensor<f32>) -> (tensor<f32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %sum = linalg.reduce ins(%p : tensor<8xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %q = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%b, %p : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum, %q : tensor<f32>, tensor<8xf32>
}

// A cheap producer (one full-size input) whose result a later loop reads
// (a backward adjoint reading a forward intermediate) is recomputed there
// from its input, and fused into its first user: the intermediate is
// never stored.
// CHECK-LABEL: func.func @recomputed_later
// CHECK-SAME: (%[[U:[^:]*]]: tensor<4x8xf32>, %[[D:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[U]] : tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[D]], %[[U]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]], %[[G]]
func.func @recomputed_later(%u: tensor<4x8xf32>, %d: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%u : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = math.tanh %x : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%d, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.mulf %y, %y : f32
    %r = arith.mulf %x, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %f, %g : tensor<4x8xf32>, tensor<4x8xf32>
}
