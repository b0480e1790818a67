// RUN: kina-opt %s -split-input-file --kina-donate-destinations | FileCheck %s
// RUN: kina-opt %s -split-input-file --kina-donate-destinations --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --kina-drop-donated-results | FileCheck %s --check-prefix=DROP

#map = affine_map<(d0) -> (d0)>
// The update's destination becomes the donated argument; bufferized, it is
// written there in place and the result leaves the signature.
// CHECK-LABEL: func.func @update
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%arg0 : tensor<8xf32>)
// DROP-LABEL: func.func @update
// DROP-SAME: (%[[W:.*]]: memref<8xf32>, %[[G:.*]]: memref<8xf32>) {
// DROP-NOT: memref.alloc
// DROP: linalg.generic {{.*}} ins(%[[W]], %[[G]] : memref<8xf32>, memref<8xf32>) outs(%[[W]] : memref<8xf32>)
// DROP-NOT: memref.copy
// DROP: return{{$}}
func.func @update(%w: tensor<8xf32> {bufferization.writable = true}, %g: tensor<8xf32>) -> (tensor<8xf32> {kina.reuses = 0 : i64}) {
  %e = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

// Through a matmul's fill to the empty tensor at the start of the chain.
// CHECK-LABEL: func.func @product
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%arg0 : tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%arg1, %arg1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F]] : tensor<4x4xf32>)
func.func @product(%c: tensor<4x4xf32> {bufferization.writable = true}, %x: tensor<4x4xf32>) -> (tensor<4x4xf32> {kina.reuses = 0 : i64}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>
// The argument is read after the update and returned as it was: the
// update goes to a copy, copied in at the end, after the old value that
// is also returned was saved. A caller passes a copy of its argument and
// reads the result there.
// DROP-LABEL: func.func @late
// DROP-SAME: (%[[W:.*]]: memref<8xf32>) -> memref<8xf32>
// DROP: %[[SAVED:.*]] = memref.alloc() : memref<8xf32>
// DROP-NEXT: memref.copy %[[W]], %[[SAVED]]
// DROP-NEXT: memref.copy %{{.*}}, %[[W]]
// DROP-NEXT: return %[[SAVED]] : memref<8xf32>
// DROP-LABEL: func.func @caller
// DROP: %[[A:.*]] = memref.alloc() : memref<8xf32>
// DROP-NEXT: memref.copy %arg0, %[[A]]
// DROP-NEXT: call @late(%[[A]]) : (memref<8xf32>) -> memref<8xf32>
// DROP: return %[[A]], %{{.*}} : memref<8xf32>, memref<8xf32>
func.func @late(%w: tensor<8xf32> {bufferization.writable = true}) -> (tensor<8xf32> {kina.reuses = 0 : i64}, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%w : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %n, %w : tensor<8xf32>, tensor<8xf32>
}
func.func @caller(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = call @late(%x) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A gathered result (ZeRO-1's new weight): the runtime fills the buffer
// of the tensor its own block was inserted into. That tensor's
// destination becomes the donated argument: the block is written into the
// argument, the runtime gathers the others around it there, and nothing
// is allocated or copied at the end.
// CHECK-LABEL: func.func @gathered
// CHECK: %[[P:.*]] = tensor.insert_slice %arg1 into %arg0[%arg2] [4] [1]
// CHECK: bufferization.to_buffer %[[P]]
// DROP-LABEL: func.func @gathered
// DROP-SAME: (%[[W:.*]]: memref<8xf32>, %[[B:.*]]: memref<4xf32>, %{{.*}}: index) {
// DROP-NOT: memref.alloc
// DROP: %[[V:.*]] = memref.subview %[[W]]
// DROP: memref.copy %[[B]], %[[V]]
// DROP: call @fill_around(%[[W]])
// DROP-NOT: memref.copy
// DROP: return{{$}}
func.func private @fill_around(memref<8xf32>)
func.func @gathered(%w: tensor<8xf32> {bufferization.writable = true}, %b: tensor<4xf32>, %at: index) -> (tensor<8xf32> {kina.reuses = 0 : i64}) {
  %e = tensor.empty() : tensor<8xf32>
  %p = tensor.insert_slice %b into %e[%at] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %m = bufferization.to_buffer %p : tensor<8xf32> to memref<8xf32>
  call @fill_around(%m) : (memref<8xf32>) -> ()
  %t = bufferization.to_tensor %m restrict writable : memref<8xf32> to tensor<8xf32>
  return %t : tensor<8xf32>
}
