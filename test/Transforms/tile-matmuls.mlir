// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=8 tile-n=32}),canonicalize,loop-invariant-subset-hoisting,canonicalize)' --split-input-file | FileCheck %s
// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=6 tile-n=16}),canonicalize,loop-invariant-subset-hoisting,canonicalize)' --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=8 tile-n=32 cache-m=20 cache-n=100 cache-k=40}),canonicalize)' --split-input-file | FileCheck %s --check-prefix=CACHE
// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=8 tile-n=32 l1-way-bytes=64}),canonicalize)' --split-input-file | FileCheck %s --check-prefix=WAY
// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-tile-matmuls{tile-m=8 tile-n=32 l1-way-bytes=64}),canonicalize,one-shot-bufferize{bufferize-function-boundaries})' --split-input-file | FileCheck %s --check-prefix=WAY-BUFFERS

// M = 16, N = 64: cache tiles (16 x 64 x 8 here). Per K step of the cache
// tiles, B's 8 x 64 block is packed once into strips of 8 x 32 contiguous
// floats (vectors of the strip width); each strip then feeds 8 x 32
// register tiles whose accumulator is carried through the K loop as a
// vector, each K step being 8 FMAs of 32 lanes.
// CHECK-LABEL: func.func @tiled
// CHECK-SAME: (%{{[^:]*}}: tensor<16x40xf32>, %[[B:[^:]*]]: tensor<40x64xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C40:.*]] = arith.constant 40 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %[[K:.*]] = %[[C0]] to %[[C40]] step %[[C8]]
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[B]][%[[K]], 0] [8, 64]
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x8x32xf32>
// CHECK: %[[PACKED:.*]] = scf.for %[[ROW:.*]] = %[[C0]] to %[[C8]] {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: scf.for %[[STRIP:.*]] = %[[C0]] to %[[C2]]
// CHECK: vector.transfer_read %[[BLOCK]]{{.*}} : tensor<8x64xf32>, vector<32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, tensor<2x8x32xf32>
// CHECK: scf.for %[[COL:.*]] = %[[C0]] to %[[C64]] step %[[C32]]
// CHECK: %[[I:.*]] = arith.divui %[[COL]], %[[C32]]
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[PACKED]][%[[I]], 0, 0] [1, 8, 32] [1, 1, 1] : tensor<2x8x32xf32> to tensor<8x32xf32>
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK: tensor.extract_slice %[[ROWS]]
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.matmul
// The AVX2 register tile, 6 x 16: 12 rows of M in two tiles of 6 FMAs of
// 16 lanes per K step, and the 4 rows left over in one 4 x 16 tile.
// AVX2-LABEL: func.func @tiled
// AVX2-DAG: %[[A2C6:.*]] = arith.constant 6 : index
// AVX2-DAG: %[[A2C12:.*]] = arith.constant 12 : index
// AVX2: tensor.empty() : tensor<4x8x16xf32>
// AVX2: scf.for %{{.*}} = %{{.*}} to %[[A2C12]] step %[[A2C6]]
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<6x16xf32>)
// AVX2-COUNT-6: vector.fma {{.*}} : vector<16xf32>
// AVX2: tensor.extract_slice %{{.*}}[12, 0] [4, 8]
// AVX2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4x16xf32>)
// AVX2-COUNT-4: vector.fma {{.*}} : vector<16xf32>
func.func @tiled(%a: tensor<16x40xf32>, %b: tensor<40x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x40xf32>, tensor<40x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// N that the strip width does not divide keeps the plain loops, whose
// multiply-add is one fused multiply-add, as in the vector tiles: a
// column split that narrows N keeps the bits.
// CHECK-LABEL: func.func @untiled
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: %[[F:.*]] = math.fma %[[A]], %[[B]], %[[C]] : f32
// CHECK-NEXT: linalg.yield %[[F]]
// AVX2-LABEL: func.func @untiled
// AVX2: math.fma
func.func @untiled(%a: tensor<6x4xf32>, %b: tensor<4x8xf32>, %c: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<6x4xf32>, tensor<4x8xf32>) outs(%c : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// From `parallel-threshold` multiply-adds (default 2^22), the N cache tiles
// are an scf.forall, of at least 8 panels where N allows (here 8 of 128
// columns), and the zero fill of the result is fused into it, per panel;
// below the threshold, all loops are serial.
// CHECK-LABEL: func.func @panels
// CHECK-SAME: %[[C:[^:]*]]: tensor<64x1024xf32>)
// CHECK: scf.forall (%[[J:.*]]) = (0) to (1024) step (128) shared_outs(%[[OUT:.*]] = %[[C]])
// CHECK: %[[PANEL:.*]] = tensor.extract_slice %[[OUT]][0, %[[J]]] [64, 128]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PANEL]] : tensor<64x128xf32>)
// CHECK: scf.for
// CHECK: vector.fma
// CHECK: tensor.parallel_insert_slice
// CHECK-LABEL: func.func @one_cache_tile_wide
// CHECK: scf.forall (%{{.*}}) = (0) to (256) step (64)
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: return
func.func @panels(%a: tensor<64x256xf32>, %b: tensor<256x1024xf32>, %c: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%c : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x1024xf32>) outs(%init : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}
// N of one cache tile (256 columns, the small GPT's products): still
// panels, 4 of 64 columns, not one serial product.
func.func @one_cache_tile_wide(%a: tensor<1024x256xf32>, %b: tensor<256x256xf32>, %c: tensor<1024x256xf32>) -> tensor<1024x256xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x256xf32>) outs(%c : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  return %0 : tensor<1024x256xf32>
}
func.func @small(%a: tensor<16x256xf32>, %b: tensor<256x512xf32>, %c: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x256xf32>, tensor<256x512xf32>) outs(%c : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %0 : tensor<16x512xf32>
}

// -----

// A batched matmul is an scf.forall over its batch of plain matmuls, each
// tiled and vectorized like the ones above.
// CHECK-LABEL: func.func @heads
// CHECK: scf.forall (%[[H:.*]]) in (12)
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x128x64xf32> into tensor<128x64xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<128x128xf32> into tensor<1x128x128xf32>
// CHECK: tensor.parallel_insert_slice {{.*}}[%[[H]], 0, 0] [1, 128, 128]
// CHECK-NOT: linalg.batch_matmul
func.func @heads(%q: tensor<12x128x64xf32>, %k: tensor<12x64x128xf32>, %s: tensor<12x128x128xf32>) -> tensor<12x128x128xf32> {
  %0 = linalg.batch_matmul ins(%q, %k : tensor<12x128x64xf32>, tensor<12x64x128xf32>) outs(%s : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  return %0 : tensor<12x128x128xf32>
}

// -----

// The cache tiles are the largest powers of two (times tile-n for N) within
// the bounds the CPU model gives that divide the sizes: M 48 under 20 ->
// 16, N 192 under 100 -> 64 (2 strips of 32), K 96 under 40 -> 32.
// CHECK-LABEL: func.func @cache_tiles
// CACHE-LABEL: func.func @cache_tiles
// CACHE-DAG: %[[C16:.*]] = arith.constant 16 : index
// CACHE-DAG: %[[C32:.*]] = arith.constant 32 : index
// CACHE-DAG: %[[C48:.*]] = arith.constant 48 : index
// CACHE-DAG: %[[C64:.*]] = arith.constant 64 : index
// CACHE-DAG: %[[C96:.*]] = arith.constant 96 : index
// CACHE-DAG: %[[C192:.*]] = arith.constant 192 : index
// CACHE: scf.for %{{.*}} = %{{.*}} to %[[C192]] step %[[C64]]
// CACHE: scf.for %{{.*}} = %{{.*}} to %[[C96]] step %[[C32]]
// CACHE: tensor.empty() : tensor<2x32x32xf32>
// CACHE: scf.for %{{.*}} = %{{.*}} to %[[C48]] step %[[C16]]
func.func @cache_tiles(%a: tensor<48x96xf32>, %b: tensor<96x192xf32>, %c: tensor<48x192xf32>) -> tensor<48x192xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<48x96xf32>, tensor<96x192xf32>) outs(%c : tensor<48x192xf32>) -> tensor<48x192xf32>
  return %0 : tensor<48x192xf32>
}

// -----

// At most tile-m rows (a decode step): no packed copy of B, which only one
// register tile would read. Steps of 8 rows of B, read in place across the
// whole width, strip by strip, into C's 4 x 32 tile: 8 x 4 FMAs per strip.
// CHECK-LABEL: func.func @streamed
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x16xf32>, %[[B:[^:]*]]: tensor<16x64xf32>
// CHECK-NOT: tensor.empty
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[C8:[^ ]*]]
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[B]][%[[K]], 0] [8, 64]
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %[[C32:[^ ]*]]
// CHECK: tensor.extract_slice %[[ROWS]][0, %[[COL]]] [8, 32]
// CHECK: vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK-COUNT-32: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write {{.*}} : vector<4x32xf32>, tensor<4x32xf32>
// CHECK-NOT: linalg.matmul
func.func @streamed(%a: tensor<4x16xf32>, %b: tensor<16x64xf32>, %c: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x64xf32>) outs(%c : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

// The backward's dX = dY W^T: B is a transpose, and its packed strips are
// made from W's rows (a transpose per block, W's 64 x 8 block seen as 2
// strips of 32 rows), not from a materialized W^T.
// CHECK-LABEL: func.func @transposed_b
// CHECK-SAME: (%{{[^:]*}}: tensor<16x40xf32>, %[[W:[^:]*]]: tensor<64x40xf32>
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[W]][0, %[[K]]] [64, 8] [1, 1] : tensor<64x40xf32> to tensor<64x8xf32>
// CHECK: %[[STRIPS:.*]] = tensor.expand_shape %[[ROWS]] {{\[}}[0, 1], [2]] output_shape [2, 32, 8]
// CHECK: %[[PACKED:.*]] = linalg.transpose ins(%[[STRIPS]] : tensor<2x32x8xf32>) outs(%{{.*}} : tensor<2x8x32xf32>) permutation = [0, 2, 1]
// CHECK: tensor.extract_slice %[[PACKED]]
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.transpose
func.func @transposed_b(%a: tensor<16x40xf32>, %w: tensor<64x40xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<40x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x40xf32>) outs(%e : tensor<40x64xf32>) permutation = [1, 0]
  %0 = linalg.matmul ins(%a, %wt : tensor<16x40xf32>, tensor<40x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// The backward's dW = X^T dY: A is a transpose; each register tile's
// column of A (8 rows at one step of K) is the run of 8 floats of X's row
// at that step, reshaped without a copy; X^T is not materialized.
// CHECK-LABEL: func.func @transposed_a
// CHECK-SAME: (%[[X:[^:]*]]: tensor<40x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (vector<8x32xf32>)
// CHECK: %[[SPAN:.*]] = tensor.extract_slice %[[X]][%{{.*}}, %{{.*}}] [1, 8] [1, 1] : tensor<40x16xf32> to tensor<1x8xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SPAN]] {{\[}}[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK: %[[COLUMN:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [8, 1]
// CHECK: vector.transfer_read %[[COLUMN]]{{.*}} : tensor<8x1xf32>, vector<8x1xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// With X's rows (16 floats, 64 B) a multiple of an L1 way apart, X is
// first copied into rows one cache line longer, and the columns are read
// from the copy.
// WAY-LABEL: func.func @transposed_a
// WAY-SAME: (%[[X:[^:]*]]: tensor<40x16xf32>
// WAY: %[[WIDE:.*]] = tensor.empty() : tensor<40x32xf32>
// WAY: %[[ROWS:.*]] = tensor.extract_slice %[[WIDE]][0, 0] [40, 16] [1, 1]
// WAY: %[[COPY:.*]] = linalg.copy ins(%[[X]] : tensor<40x16xf32>) outs(%[[ROWS]] : tensor<40x16xf32>)
// WAY-NOT: linalg.transpose
// WAY: tensor.extract_slice %[[COPY]]{{.*}} : tensor<40x16xf32> to tensor<1x8xf32>
// WAY-BUFFERS-LABEL: func.func @transposed_a
// WAY-BUFFERS: %[[WIDE:.*]] = memref.alloc() {{.*}} : memref<40x32xf32>
// WAY-BUFFERS: %[[ROWS:.*]] = memref.subview %[[WIDE]][0, 0] [40, 16] [1, 1] : memref<40x32xf32> to memref<40x16xf32, strided<[32, 1]>>
// WAY-BUFFERS: linalg.copy ins(%{{.*}}) outs(%[[ROWS]] : memref<40x16xf32, strided<[32, 1]>>)
// WAY-BUFFERS: memref.subview %[[ROWS]]{{.*}} to memref<1x8xf32, strided<[32, 1], offset: ?>>
func.func @transposed_a(%x: tensor<40x16xf32>, %b: tensor<40x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<16x40xf32>
  %xt = linalg.transpose ins(%x : tensor<40x16xf32>) outs(%e : tensor<16x40xf32>) permutation = [1, 0]
  %0 = linalg.matmul ins(%xt, %b : tensor<16x40xf32>, tensor<40x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}
