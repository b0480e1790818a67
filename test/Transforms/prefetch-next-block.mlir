// RUN: kina-opt %s --kina-prefetch-next-block --canonicalize --split-input-file | FileCheck %s

// B (128 x 256) in panels of 64 columns and K blocks of 32 rows: a block is
// 32 rows x 4 lines = 128 lines, its register loops take 2 strips x 4 row
// tiles x 32 steps = 256 steps, so every 2 steps prefetch one line of the
// next block: rows k + 32 of the same columns, or after the last K block
// rows 0 of the next panel (at most column 192, the last panel).
// CHECK-LABEL: func.func @next_block
// CHECK-SAME: %[[B:[^:]*]]: memref<128x256xf32>
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C112:.*]] = arith.constant 112 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C192:.*]] = arith.constant 192 : index
// CHECK: scf.for %[[N:[^ ]*]] =
// CHECK: scf.for %[[K:[^ ]*]] =
// CHECK: %[[BELOW:.*]] = arith.addi %[[K]], %[[C32]]
// CHECK: %[[LAST:.*]] = arith.cmpi sge, %[[BELOW]], %[[C128]]
// CHECK: %[[NEXTROW:.*]] = arith.select %[[LAST]], %{{.*}}, %[[BELOW]]
// CHECK: %[[RIGHT:.*]] = arith.addi %[[N]], %{{.*}}
// CHECK: %[[CLAMPED:.*]] = arith.minsi %[[RIGHT]], %[[C192]]
// CHECK: %[[NEXTCOL:.*]] = arith.select %[[LAST]], %[[CLAMPED]], %[[N]]
// CHECK: } {kina.pack_rows}
// CHECK: scf.for %[[S:[^ ]*]] =
// CHECK: scf.for %[[M:[^ ]*]] =
// Run (strip * 4) + tile of the register loop (8 runs) prefetches the
// lines from run * 128 / 8 on, down the block's 32 rows a column of lines
// (16 floats) at a time; its first row is kept 16 rows (its groups) above
// B's end.
// CHECK: %[[STRIP:.*]] = arith.divui %[[S]], %[[C32]]
// CHECK: %[[RUNS0:.*]] = arith.muli %[[STRIP]], %[[C4]]
// CHECK: %[[TILE:.*]] = arith.divui %[[M]], %[[C8]]
// CHECK: %[[TILEINDEX:.*]] = arith.addi %[[RUNS0]], %[[TILE]]
// CHECK: %[[LINES:.*]] = arith.muli %[[TILEINDEX]], %[[C128]]
// CHECK: %[[FIRST:.*]] = arith.divui %[[LINES]], %[[C8]]
// CHECK: %[[INCOLUMN:.*]] = arith.remui %[[FIRST]], %[[C32]]
// CHECK: %[[BELOWNEXT:.*]] = arith.addi %[[NEXTROW]], %[[INCOLUMN]]
// CHECK: %[[FIRSTROW:.*]] = arith.minui %[[BELOWNEXT]], %[[C112]]
// CHECK: %[[COLUMN:.*]] = arith.divui %[[FIRST]], %[[C32]]
// CHECK: %[[DCOL:.*]] = arith.muli %[[COLUMN]], %[[C16]]
// CHECK: %[[COL:.*]] = arith.addi %[[NEXTCOL]], %[[DCOL]]
// A line's share is 2 steps, so the register loop is unrolled by 2, each
// pair of steps prefetches once, and group g of the run the row g below
// the first: only an add in the loop.
// CHECK: scf.for %[[KK:[^ ]*]] = %{{.*}} to %{{.*}} step %[[C2]] iter_args
// CHECK: %[[GROUP:.*]] = arith.divui %[[KK]], %[[C2]]
// CHECK: %[[ROW:.*]] = arith.addi %[[FIRSTROW]], %[[GROUP]]
// CHECK: memref.prefetch %[[B]][%[[ROW]], %[[COL]]], read, locality<3>, data
// CHECK-NOT: memref.prefetch
// CHECK-COUNT-2: vector.fma
// CHECK-NOT: memref.prefetch
// CHECK: scf.yield
func.func @next_block(%b: memref<128x256xf32>, %acc0: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c256 step %c64 {
    %panel = memref.subview %b[0, %n] [128, 64] [1, 1] : memref<128x256xf32> to memref<128x64xf32, strided<[256, 1], offset: ?>>
    scf.for %k = %c0 to %c128 step %c32 {
      %block = memref.subview %panel[%k, 0] [32, 64] [1, 1] : memref<128x64xf32, strided<[256, 1], offset: ?>> to memref<32x64xf32, strided<[256, 1], offset: ?>>
      %packed = memref.alloc() : memref<2x32x32xf32>
      scf.for %row = %c0 to %c32 step %c1 {
        scf.for %strip = %c0 to %c2 step %c1 {
          %col = arith.muli %strip, %c32 : index
          %v = vector.transfer_read %block[%row, %col], %pad {in_bounds = [true]} : memref<32x64xf32, strided<[256, 1], offset: ?>>, vector<32xf32>
          vector.transfer_write %v, %packed[%strip, %row, %c0] {in_bounds = [true]} : vector<32xf32>, memref<2x32x32xf32>
        }
      } {kina.pack_rows}
      scf.for %s = %c0 to %c64 step %c32 {
        scf.for %m = %c0 to %c32 step %c8 {
          %r = scf.for %kk = %c0 to %c32 step %c1 iter_args(%acc = %acc0) -> (vector<8x32xf32>) {
            %x = vector.extract %acc[0] : vector<32xf32> from vector<8x32xf32>
            %y = vector.fma %x, %x, %x : vector<32xf32>
            %z = vector.insert %y, %acc [0] : vector<32xf32> into vector<8x32xf32>
            scf.yield %z : vector<8x32xf32>
          }
        }
      }
      memref.dealloc %packed : memref<2x32x32xf32>
    }
  }
  return
}

// -----

// Register loops taking fewer steps (32) than the next block has lines
// (128): left alone, as is a block of a matrix of unknown shape.
// CHECK-LABEL: func.func @too_few_steps
// CHECK-NOT: memref.prefetch
// CHECK-LABEL: func.func @dynamic_matrix
// CHECK-NOT: memref.prefetch
func.func @too_few_steps(%b: memref<128x64xf32>, %acc0: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c128 step %c32 {
    %block = memref.subview %b[%k, 0] [32, 64] [1, 1] : memref<128x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    %packed = memref.alloc() : memref<2x32x32xf32>
    scf.for %row = %c0 to %c32 step %c1 {
      %v = vector.transfer_read %block[%row, %c0], %pad {in_bounds = [true]} : memref<32x64xf32, strided<[64, 1], offset: ?>>, vector<32xf32>
      vector.transfer_write %v, %packed[%c0, %row, %c0] {in_bounds = [true]} : vector<32xf32>, memref<2x32x32xf32>
    } {kina.pack_rows}
    %r = scf.for %kk = %c0 to %c32 step %c1 iter_args(%acc = %acc0) -> (vector<8x32xf32>) {
      %x = vector.extract %acc[0] : vector<32xf32> from vector<8x32xf32>
      %y = vector.fma %x, %x, %x : vector<32xf32>
      %z = vector.insert %y, %acc [0] : vector<32xf32> into vector<8x32xf32>
      scf.yield %z : vector<8x32xf32>
    }
    memref.dealloc %packed : memref<2x32x32xf32>
  }
  return
}
func.func @dynamic_matrix(%b: memref<?x64xf32>, %acc0: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  %pad = arith.constant 0.0 : f32
  %block = memref.subview %b[0, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<1x64xf32, strided<[64, 1]>>
  %packed = memref.alloc() : memref<2x1x32xf32>
  scf.for %row = %c0 to %c1 step %c1 {
    %v = vector.transfer_read %block[%row, %c0], %pad {in_bounds = [true]} : memref<1x64xf32, strided<[64, 1]>>, vector<32xf32>
    vector.transfer_write %v, %packed[%c0, %row, %c0] {in_bounds = [true]} : vector<32xf32>, memref<2x1x32xf32>
  } {kina.pack_rows}
  %r = scf.for %kk = %c0 to %c1024 step %c1 iter_args(%acc = %acc0) -> (vector<8x32xf32>) {
    %x = vector.extract %acc[0] : vector<32xf32> from vector<8x32xf32>
    %y = vector.fma %x, %x, %x : vector<32xf32>
    %z = vector.insert %y, %acc [0] : vector<32xf32> into vector<8x32xf32>
    scf.yield %z : vector<8x32xf32>
  }
  memref.dealloc %packed : memref<2x1x32xf32>
  return
}

// -----

// A register loop of 2 steps (K blocks of 8 rows, tiles of 1 row): a group
// of 2 would unroll it away, so it keeps one prefetch per step (a loop
// unrolled whole used to crash the pass).
// CHECK-LABEL: func.func @two_steps
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: memref.prefetch
// CHECK-COUNT-1: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
func.func @two_steps(%b: memref<16x256xf32>, %acc0: vector<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c256 step %c64 {
    %panel = memref.subview %b[0, %n] [16, 64] [1, 1] : memref<16x256xf32> to memref<16x64xf32, strided<[256, 1], offset: ?>>
    scf.for %k = %c0 to %c16 step %c8 {
      %block = memref.subview %panel[%k, 0] [8, 64] [1, 1] : memref<16x64xf32, strided<[256, 1], offset: ?>> to memref<8x64xf32, strided<[256, 1], offset: ?>>
      %packed = memref.alloc() : memref<2x8x32xf32>
      scf.for %row = %c0 to %c8 step %c1 {
        scf.for %strip = %c0 to %c2 step %c1 {
          %col = arith.muli %strip, %c32 : index
          %v = vector.transfer_read %block[%row, %col], %pad {in_bounds = [true]} : memref<8x64xf32, strided<[256, 1], offset: ?>>, vector<32xf32>
          vector.transfer_write %v, %packed[%strip, %row, %c0] {in_bounds = [true]} : vector<32xf32>, memref<2x8x32xf32>
        }
      } {kina.pack_rows}
      scf.for %s = %c0 to %c64 step %c32 {
        scf.for %m = %c0 to %c32 step %c1 {
          %r = scf.for %kk = %c0 to %c2 step %c1 iter_args(%acc = %acc0) -> (vector<8x32xf32>) {
            %x = vector.extract %acc[0] : vector<32xf32> from vector<8x32xf32>
            %y = vector.fma %x, %x, %x : vector<32xf32>
            %z = vector.insert %y, %acc [0] : vector<32xf32> into vector<8x32xf32>
            scf.yield %z : vector<8x32xf32>
          }
        }
      }
      memref.dealloc %packed : memref<2x8x32xf32>
    }
  }
  return
}
