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
  }
  return
}

// -----

// Left alone: a fill separated from the loop by a write to its buffer, a
// buffer the loop uses otherwise than by vector reads and writes, and
// loops a pass in between left in another shape than the tiling's: a K
// loop whose M loop skips rows 8-15 (they keep the fill's zeros), and one
// whose accumulator read stayed inside the register loop (the first K
// block reads it 4 times, the sums of the steps before).
// CHECK-LABEL: func.func @written_before
// CHECK: linalg.fill
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @other_use
// CHECK: linalg.fill
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @rows_skipped
// CHECK: linalg.fill
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @read_each_step
// CHECK: linalg.fill
// CHECK-NOT: scf.if
func.func @written_before(%c: memref<8x32xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  memref.store %one, %c[%c0, %c0] : memref<8x32xf32>
  scf.for %k = %c0 to %c4 step %c1 {
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
    %sum = arith.addf %acc, %x : vector<8x32xf32>
    vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
  }
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
  }
  return
}
func.func @rows_skipped(%c: memref<16x64xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  scf.for %k = %c0 to %c128 step %c32 {
    scf.for %m = %c0 to %c8 step %c8 {
      scf.for %n = %c0 to %c64 step %c32 {
        %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
        %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
        %sum = arith.addf %acc, %x : vector<8x32xf32>
        vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
      }
    }
  }
  return
}
func.func @read_each_step(%c: memref<8x32xf32>, %x: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  scf.for %k = %c0 to %c128 step %c32 {
    scf.for %step = %c0 to %c4 step %c1 {
      %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32>, vector<8x32xf32>
      %sum = arith.addf %acc, %x : vector<8x32xf32>
      vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32>
    }
  }
  return
}

// -----

// K is one block (a weight gradient over a batch's rows): the M tiles' loop
// reads each accumulator once, so every read is the fill value, with B's
// packing between the fill and the loop (it uses another buffer). A fill
// separated from the loop by a write to its buffer stays, as does one
// whose buffer the loop does not read (a row of the result), and one whose
// tiles a pass in between updates twice (a second product added into the
// same loop: its read is the first one's sum).
// CHECK-LABEL: func.func @one_block
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: } {kina.pack_rows}
// CHECK: scf.for
// CHECK-NOT: vector.transfer_read
// CHECK: %[[ACC:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<8x32xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]]
// CHECK: vector.transfer_write %[[SUM]]
// CHECK-LABEL: func.func @written_between
// CHECK: linalg.fill
// CHECK: vector.transfer_read
// CHECK-LABEL: func.func @row_filled
// CHECK: linalg.fill
// CHECK: linalg.fill
// CHECK: vector.transfer_read
// CHECK-LABEL: func.func @updated_twice
// CHECK: linalg.fill
// CHECK: vector.transfer_read
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
  } {kina.pack_rows}
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %n = %c0 to %c64 step %c32 {
      %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
      %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
      %sum = arith.addf %acc, %x : vector<8x32xf32>
      vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
    }
  }
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
  }
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
  }
  return
}
func.func @updated_twice(%c: memref<16x64xf32>, %x: vector<8x32xf32>, %y: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  scf.for %m = %c0 to %c16 step %c8 {
    scf.for %n = %c0 to %c64 step %c32 {
      %tile = memref.subview %c[%m, %n] [8, 32] [1, 1] : memref<16x64xf32> to memref<8x32xf32, strided<[64, 1], offset: ?>>
      %acc = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
      %sum = arith.addf %acc, %x : vector<8x32xf32>
      vector.transfer_write %sum, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
      %again = vector.transfer_read %tile[%c0, %c0], %zero {in_bounds = [true, true]} : memref<8x32xf32, strided<[64, 1], offset: ?>>, vector<8x32xf32>
      %more = arith.addf %again, %y : vector<8x32xf32>
      vector.transfer_write %more, %tile[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<8x32xf32, strided<[64, 1], offset: ?>>
    }
  }
  return
}
