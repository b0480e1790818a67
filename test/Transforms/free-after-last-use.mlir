// RUN: kina-opt %s --kina-free-after-last-use --split-input-file | FileCheck %s

// Each temporary is freed after the last op that reads it or a view of it,
// not at the end of the block: %b can then reuse %a's memory.
// CHECK-LABEL: func.func @two_temporaries
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[A]]
// CHECK: linalg.copy ins(%[[VIEW]] {{.*}} outs(%[[MID:[^ ]*]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: scf.for
// CHECK: linalg.copy ins(%[[B]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: linalg.copy ins(%[[MID]]
// CHECK-NEXT: return
func.func @two_temporaries(%x: f32, %mid: memref<2x32xf32>, %out: memref<2x32xf32>) {
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64xf32>)
  %view = memref.expand_shape %a [[0, 1]] output_shape [2, 32] : memref<64xf32> into memref<2x32xf32>
  linalg.copy ins(%view : memref<2x32xf32>) outs(%mid : memref<2x32xf32>)
  %b = memref.alloc() : memref<2x32xf32>
  linalg.fill ins(%x : f32) outs(%b : memref<2x32xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.copy ins(%b : memref<2x32xf32>) outs(%out : memref<2x32xf32>)
  }
  linalg.copy ins(%mid : memref<2x32xf32>) outs(%out : memref<2x32xf32>)
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<2x32xf32>
  return
}

// -----

// A view that leaves through a terminator: the dealloc stays.
// CHECK-LABEL: func.func @escapes
// CHECK: scf.yield
// CHECK: memref.dealloc
// CHECK-NEXT: return
func.func @escapes(%x: f32, %p: i1, %out: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64xf32>)
  %r = scf.if %p -> memref<64xf32> {
    scf.yield %a : memref<64xf32>
  } else {
    scf.yield %out : memref<64xf32>
  }
  linalg.copy ins(%r : memref<64xf32>) outs(%out : memref<64xf32>)
  memref.dealloc %a : memref<64xf32>
  return
}

// -----

// Its address as an integer, into a runtime call (a collective's): the
// call is its last use.
// CHECK-LABEL: func.func @address_into_a_call
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK-NEXT: call @kina_collective_all_gather(%[[I]])
// CHECK-NEXT: memref.dealloc
// CHECK: call @kina_collective_all_gather
func.func private @kina_collective_all_gather(i64)
func.func @address_into_a_call(%x: f32) {
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64xf32>)
  %p = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
  %i = arith.index_cast %p : index to i64
  call @kina_collective_all_gather(%i) : (i64) -> ()
  %c = arith.constant 0 : i64
  call @kina_collective_all_gather(%c) : (i64) -> ()
  memref.dealloc %a : memref<64xf32>
  return
}

// -----

// Into any other call, which might keep it: the dealloc stays at the end.
// CHECK-LABEL: func.func @address_into_another_call
// CHECK: call @keeps_address
// CHECK: call @keeps_address
// CHECK-NEXT: memref.dealloc
func.func private @keeps_address(i64)
func.func @address_into_another_call(%x: f32) {
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64xf32>)
  %p = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
  %i = arith.index_cast %p : index to i64
  call @keeps_address(%i) : (i64) -> ()
  %c = arith.constant 0 : i64
  call @keeps_address(%c) : (i64) -> ()
  memref.dealloc %a : memref<64xf32>
  return
}

// -----

// Its address anywhere else (here stored): the dealloc stays at the end.
// CHECK-LABEL: func.func @address_stored
// CHECK: memref.store
// CHECK: call @use_nothing
// CHECK-NEXT: memref.dealloc
func.func private @use_nothing()
func.func @address_stored(%x: f32, %slot: memref<index>) {
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64xf32>)
  %p = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
  memref.store %p, %slot[] : memref<index>
  call @use_nothing() : () -> ()
  memref.dealloc %a : memref<64xf32>
  return
}
