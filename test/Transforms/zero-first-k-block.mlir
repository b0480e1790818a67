// RUN: kina-opt %s --kina-zero-first-k-block --split-input-file | FileCheck %s

// The fill before a K-blocks loop goes; the accumulator tile's read is the
// fill value in the first iteration, the buffer afterwards.
// CHECK-LABEL: func.func @first_block
// CHECK-SAME: %[[C:[^:]*]]: memref<16x64xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[K:[^ ]*]] = %[[C0]] to
// CHECK: %[[TILE:.*]] = memref.subview %[[C]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %[[C0]]
// CHECK: %[[ACC:.*]] = scf.if %[[FIRST]] -> (vector<8x32xf32>) {
// CHECK:   %[[ZEROS:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<8x32xf32>
// CHECK:   scf.yield %[[ZEROS]]
// CHECK: } else {
// CHECK:   %[[READ:.*]] = vector.transfer_read %[[TILE]]
// CHECK:   scf.yield %[[READ]]
// CHECK: }
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]]
// CHECK: vector.transfer_write %[[SUM]], %[[TILE]]
// CHECK: } {kina_k_blocks}
func.func @first_block(%c: memref<16x64xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  scf.for %k = %c0 to %c128 step %c32 {
    scf.for %m = %c0 to %c16 step %c8 {
      scf.for %n = %c0 to %c64 step %c32 {
        %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
        %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
        %sum = arith.addf %acc, %x : vector<8x32xf32>
        vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
      }
    }
  } {kina_k_blocks}
  return
}

// -----

// Left alone: a loop without the marker, a fill that does not come right
// before the loop, a buffer the loop uses otherwise than by vector reads
// and writes.
// CHECK-LABEL: func.func @unmarked
// CHECK: linalg.fill
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @fill_not_adjacent
// CHECK: linalg.fill
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @other_use
// CHECK: linalg.fill
// CHECK-NOT: scf.if
func.func @unmarked(%c: memref<8x32xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  scf.for %k = %c0 to %c4 step %c1 {
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %sum = arith.addf %acc, %x : vector<8x32xf32>
    vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  }
  return
}
func.func @fill_not_adjacent(%c: memref<8x32xf32>, %x: vector<8x32xf32>, %p: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  memref.store %zero, %p[] : memref<f32>
  scf.for %k = %c0 to %c4 step %c1 {
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %sum = arith.addf %acc, %x : vector<8x32xf32>
    vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  } {kina_k_blocks}
  return
}
func.func @other_use(%c: memref<8x32xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  scf.for %k = %c0 to %c4 step %c1 {
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %sum = arith.addf %acc, %x : vector<8x32xf32>
    vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
    %s = memref.load %c[%c0, %c0] : memref<8x32xf32>
    memref.store %s, %c[%c1, %c0] : memref<8x32xf32>
  } {kina_k_blocks}
  return
}

// -----

// K is one block (a weight gradient over a batch's rows): the M tiles' loop
// reads each accumulator once, so every read is the fill value, with B's
// packing between the fill and the loop (it uses another buffer). A fill
// separated from the loop by a write to its buffer stays, as does one
// whose buffer the loop does not read (a row of the result).
// CHECK-LABEL: func.func @one_block
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: } {kina_pack_rows}
// CHECK: scf.for
// CHECK-NOT: vector.transfer_read
// CHECK: %[[ACC:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<8x32xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]]
// CHECK: vector.transfer_write %[[SUM]]
// CHECK: } {kina_one_k_block}
// CHECK-LABEL: func.func @written_between
// CHECK: linalg.fill
// CHECK: vector.transfer_read
// CHECK-LABEL: func.func @row_filled
// CHECK: linalg.fill
// CHECK: linalg.fill
// CHECK: vector.transfer_read
func.func @one_block(%c: memref<16x64xf32>, %b: memref<32x64xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  %packed = memref.alloc() : memref<32x64xf32>
  scf.for %r = %c0 to %c32 step %c1 {
    %row = vector.transfer_read %b[%r, %c0], %zero {in_bounds = [true]} : memref<32x64xf32>, vector<64xf32>
    vector.transfer_write %row, %packed[%r, %c0] {in_bounds = [true]} : vector<64xf32>, memref<32x64xf32>
  } {kina_pack_rows}
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %n = %c0 to %c64 step %c32 {
      %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
      %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
      %sum = arith.addf %acc, %x : vector<8x32xf32>
      vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
    }
  } {kina_one_k_block}
  memref.dealloc %packed : memref<32x64xf32>
  return
}
func.func @written_between(%c: memref<16x64xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  memref.store %zero, %c[%c0, %c0] : memref<16x64xf32>
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %n = %c0 to %c64 step %c32 {
      %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
      %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
      %sum = arith.addf %acc, %x : vector<8x32xf32>
      vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
    }
  } {kina_one_k_block}
  return
}
func.func @row_filled(%c: memref<16x64xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  %row = memref.subview %c[0, 0] [1, 64] [1, 1] : memref<16x64xf32> to memref<1x64xf32, strided<[64, 1]>>
  linalg.fill ins(%zero : f32) outs(%row : memref<1x64xf32, strided<[64, 1]>>)
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %n = %c0 to %c64 step %c32 {
      %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
      %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
      %sum = arith.addf %acc, %x : vector<8x32xf32>
      vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
    }
  } {kina_one_k_block}
  return
}
