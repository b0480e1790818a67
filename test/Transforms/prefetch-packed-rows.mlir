// RUN: kina-opt %s --kina-prefetch-packed-rows --split-input-file | FileCheck %s
// RUN: kina-opt %s --kina-prefetch-packed-rows=distance=3 --split-input-file | FileCheck %s --check-prefix=THREE

// A packing loop (marked by kina-tile-matmuls): each read of 32 floats of
// row r of B is preceded by prefetches of its two cache lines in row r + 8.
// CHECK-LABEL: func.func @pack
// CHECK-SAME: (%[[B:[^:]*]]: memref<64x128xf32
// CHECK: scf.for %[[ROW:[^ ]*]] =
// CHECK: scf.for %[[STRIP:[^ ]*]] =
// CHECK: %[[COL:.*]] = arith.muli %[[STRIP]]
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[AHEAD:.*]] = arith.addi %[[ROW]], %[[C8]]
// CHECK: memref.prefetch %[[B]][%[[AHEAD]], %[[COL]]], read, locality<3>, data
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[COL]], %[[C16]]
// CHECK: memref.prefetch %[[B]][%[[AHEAD]], %[[NEXT]]], read, locality<3>, data
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read %[[B]][%[[ROW]], %[[COL]]]
// THREE-LABEL: func.func @pack
// THREE: %[[C3:.*]] = arith.constant 3 : index
// THREE: arith.addi %{{.*}}, %[[C3]]
// THREE-COUNT-2: memref.prefetch
func.func @pack(%b: memref<64x128xf32, strided<[128, 1], offset: ?>>, %out: memref<4x64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  scf.for %row = %c0 to %c64 step %c1 {
    scf.for %strip = %c0 to %c4 step %c1 {
      %col = arith.muli %strip, %c32 : index
      %v = vector.transfer_read %b[%row, %col], %pad {in_bounds = [true]} : memref<64x128xf32, strided<[128, 1], offset: ?>>, vector<32xf32>
      vector.transfer_write %v, %out[%strip, %row, %c0] {in_bounds = [true]} : vector<32xf32>, memref<4x64x32xf32>
    }
  } {kina.pack_rows}
  return
}

// -----

// Other loops are left alone.
// CHECK-LABEL: func.func @not_packing
// CHECK-NOT: memref.prefetch
func.func @not_packing(%b: memref<64x128xf32>, %out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  scf.for %row = %c0 to %c64 step %c1 {
    %v = vector.transfer_read %b[%row, %c0], %pad {in_bounds = [true]} : memref<64x128xf32>, vector<32xf32>
    vector.transfer_write %v, %out[%row, %c0] {in_bounds = [true]} : vector<32xf32>, memref<64x32xf32>
  }
  return
}
