// RUN: kina-opt %s --kina-split-parallel-ops | FileCheck %s
// RUN: kina-opt %s --kina-split-parallel-ops=min-iterations=1000000 | FileCheck %s --check-prefix=HIGH
// RUN: kina-opt %s --kina-split-parallel-ops --one-shot-bufferize="bufferize-function-boundaries" --cse --canonicalize | FileCheck %s --check-prefix=BUFFERS

// A large elementwise op: its outermost parallel dimension of more than one
// iteration (here the second, of 12) is split into about 8 pieces.
// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%{{[^:]*}}: tensor<1x12x128x128xf32>, %[[INIT:[^:]*]]: tensor<1x12x128x128xf32>)
// CHECK: scf.forall (%[[H:.*]]) = (0) to (12) step (2) shared_outs(%[[OUT:.*]] = %[[INIT]])
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x128x128xf32>)
// CHECK: tensor.parallel_insert_slice {{.*}} into %[[OUT]][0, %[[H]], 0, 0] [1, 2, 128, 128]
// HIGH-LABEL: func.func @scale
// HIGH-NOT: scf.forall
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @scale(%x: tensor<1x12x128x128xf32>, %out: tensor<1x12x128x128xf32>) -> tensor<1x12x128x128xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x12x128x128xf32>) outs(%out : tensor<1x12x128x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<1x12x128x128xf32>
  return %0 : tensor<1x12x128x128xf32>
}

// A row reduction (softmax's max) is split along its rows only; the
// reduced dimension stays whole, so every row is reduced as before.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.forall (%{{.*}}) = (0) to (768) step (96)
// CHECK: linalg.reduce ins(%{{.*}} : tensor<96x128xf32>) outs(%{{.*}} : tensor<96xf32>) dimensions = [1]
func.func @row_max(%x: tensor<768x128xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %0 = linalg.reduce ins(%x : tensor<768x128xf32>) outs(%init : tensor<768xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %m = arith.maximumf %a, %b : f32
      linalg.yield %m : f32
    }
  return %0 : tensor<768xf32>
}

// Small ops and fills stay as they are.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: return
func.func @small(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %big = tensor.empty() : tensor<1024x1024xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%big : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %t = linalg.transpose ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) permutation = [1, 0]
  return %t : tensor<64x64xf32>
}

// An update that reads the tensor it writes into (a donated argument's,
// ins(%w) outs(%w)): each piece reads its own slice from the shared
// output, so that bufferization sees one buffer updated in place. A
// transpose's input slice is another region of the output: it keeps
// reading the original.
#elementwise = affine_map<(d0, d1) -> (d0, d1)>
#swapped = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @update_in_place
// CHECK-SAME: (%[[W:[^:]*]]: tensor<512x512xf32>, %[[G:[^:]*]]: tensor<512x512xf32>)
// CHECK: scf.forall (%[[I:.*]]) = (0) to (512) step (64) shared_outs(%[[OUT:.*]] = %[[W]])
// CHECK-DAG: %[[OLD:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [64, 512] [1, 1]
// CHECK-DAG: tensor.extract_slice %[[G]][%[[I]], 0] [64, 512] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[OLD]], %{{.*}} : tensor<64x512xf32>, tensor<64x512xf32>) outs(%[[OLD]] : tensor<64x512xf32>)
// CHECK-LABEL: func.func @transpose_in_place
// CHECK: scf.forall ({{.*}}) shared_outs(%[[T:.*]] = %[[X:[^)]*]])
// CHECK-NOT: tensor.extract_slice %[[T]]{{.*}} [512, 64]
// CHECK: tensor.extract_slice %[[X]]
func.func @update_in_place(%w: tensor<512x512xf32>, %g: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %n = linalg.generic {indexing_maps = [#elementwise, #elementwise, #elementwise], iterator_types = ["parallel", "parallel"]} ins(%w, %g : tensor<512x512xf32>, tensor<512x512xf32>) outs(%w : tensor<512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<512x512xf32>
  return %n : tensor<512x512xf32>
}
func.func @transpose_in_place(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %n = linalg.generic {indexing_maps = [#swapped, #elementwise], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<512x512xf32>) outs(%x : tensor<512x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<512x512xf32>
  return %n : tensor<512x512xf32>
}

// An optimizer's update of two donated tensors at once (AdamW's weight and
// moment): each piece reads and writes one slice value per tensor, so the
// bufferization updates both in place, with no copy of either piece.
// BUFFERS-LABEL: func.func @update_two_in_place
// BUFFERS-NOT: memref.alloc
// BUFFERS-NOT: memref.copy
// BUFFERS: return
func.func @update_two_in_place(%w: tensor<512x512xf32>, %m: tensor<512x512xf32>, %g: tensor<512x512xf32>) -> (tensor<512x512xf32>, tensor<512x512xf32>) {
  %n:2 = linalg.generic {indexing_maps = [#elementwise, #elementwise, #elementwise, #elementwise, #elementwise], iterator_types = ["parallel", "parallel"]} ins(%w, %m, %g : tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>) outs(%m, %w : tensor<512x512xf32>, tensor<512x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32, %p: f32):
    %mn = arith.addf %b, %c : f32
    %wn = arith.subf %a, %mn : f32
    linalg.yield %mn, %wn : f32, f32
  } -> (tensor<512x512xf32>, tensor<512x512xf32>)
  return %n#1, %n#0 : tensor<512x512xf32>, tensor<512x512xf32>
}

// A BF16 product's operand widened with each pair of K swapped (read at
// `1 - d2`) stays whole: upstream's tiling would slice it one element long
// in d2 and the tiled op would fail to verify (a 128 x 768 BF16 product
// for an AVX2 CPU failed to compile so).
// CHECK-LABEL: func.func @pair_swap
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<128x384x2xbf16>) outs(%{{.*}} : tensor<128x384x2xf32>)
#pair_swapped = affine_map<(d0, d1, d2) -> (d0, d1, 1 - d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @pair_swap(%x: tensor<128x384x2xbf16>, %out: tensor<128x384x2xf32>) -> tensor<128x384x2xf32> {
  %0 = linalg.generic {indexing_maps = [#pair_swapped, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<128x384x2xbf16>) outs(%out : tensor<128x384x2xf32>) {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<128x384x2xf32>
  return %0 : tensor<128x384x2xf32>
}

// A size-1 dim read at 0 (a column spread over a row, as softmax's
// subtraction reads its maxima) still splits along the rows.
// CHECK-LABEL: func.func @spread_column
// CHECK: scf.forall (%{{.*}}) = (0) to (768) step (96)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<96x1xf32>) outs(%{{.*}} : tensor<96x128xf32>)
#column = affine_map<(d0, d1) -> (d0, 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @spread_column(%x: tensor<768x1xf32>, %out: tensor<768x128xf32>) -> tensor<768x128xf32> {
  %0 = linalg.generic {indexing_maps = [#column, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<768x1xf32>) outs(%out : tensor<768x128xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<768x128xf32>
  return %0 : tensor<768x128xf32>
}
