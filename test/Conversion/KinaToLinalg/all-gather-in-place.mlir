// RUN: kina-opt %s --kina-to-linalg --canonicalize --eliminate-empty-tensors --one-shot-bufferize --cse --canonicalize | FileCheck %s
// RUN: kina-opt %s --kina-to-linalg | kina-opt --kina-linalg-to-llvm | FileCheck %s --check-prefix=LLVM

// A device's block of an all-gather is computed in its place: after
// eliminate-empty-tensors and bufferization, the matmul's output is a view
// of the gathered buffer at this device's offset, and nothing copies it.
kina.mesh @mesh [x = 2]

// CHECK-LABEL: func.func @logits
func.func @logits(%h: !kina.tensor<4x8xf32, @local>, %w: !kina.tensor<8x3xf32, @local>) -> !kina.tensor<1x4x6xf32, @local> {
  // CHECK: %[[COORD:.*]] = call @kina_collective_coordinate
  // CHECK: %[[C:.*]] = arith.index_cast %[[COORD]]
  // CHECK: %[[OFFSET:.*]] = arith.muli %[[C]], %{{.*}} : index
  // CHECK: %[[GATHERED:.*]] = memref.alloc() {{.*}} : memref<4x6xf32>
  // CHECK: %[[MINE:.*]] = memref.subview %[[GATHERED]][0, %[[OFFSET]]] [4, 3] [1, 1] : memref<4x6xf32> to memref<4x3xf32, strided<[6, 1], offset: ?>>
  // CHECK: linalg.matmul ins({{.*}}) outs(%[[MINE]] : memref<4x3xf32, strided<[6, 1], offset: ?>>)
  // CHECK-NOT: memref.copy
  // CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[GATHERED]]
  // CHECK: %[[A:.*]] = arith.index_cast %[[ADDRESS]]
  // CHECK: call @kina_collective_all_gather(%[[A]],
  // CHECK: %[[VIEW:.*]] = memref.expand_shape %[[GATHERED]] {{\[\[}}0, 1], [2]] output_shape [1, 4, 6]
  // CHECK: bufferization.to_tensor %[[VIEW]]
  %m = kina.matmul %h, %w : (!kina.tensor<4x8xf32, @local>, !kina.tensor<8x3xf32, @local>) -> !kina.tensor<4x3xf32, @local>
  %r = kina.reshape %m to [1, 4, 3] : !kina.tensor<4x3xf32, @local> -> !kina.tensor<1x4x3xf32, @local>
  %g = kina.all_gather %r[axis = 2, over = "x"] : !kina.tensor<1x4x3xf32, @local> -> !kina.tensor<1x4x6xf32, @local>
  return %g : !kina.tensor<1x4x6xf32, @local>
}

// The whole per-device pipeline (--kina-linalg-to-llvm) keeps it: the one
// allocation is the result, the caller's (an out parameter), and the
// runtime gets its address.
// LLVM-LABEL: llvm.func @logits
// LLVM: %[[COORD:.*]] = llvm.call @kina_collective_coordinate
// LLVM-NOT: alloc
// LLVM: llvm.call @kina_collective_all_gather(
