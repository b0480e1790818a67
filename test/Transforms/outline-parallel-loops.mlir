// RUN: kina-opt %s --kina-outline-parallel-loops | FileCheck %s
// RUN: kina-opt %s --kina-outline-parallel-loops --convert-linalg-to-loops \
// RUN:   --expand-strided-metadata --lower-affine --convert-scf-to-cf \
// RUN:   --convert-arith-to-llvm --convert-index-to-llvm --finalize-memref-to-llvm \
// RUN:   --convert-func-to-llvm=use-bare-ptr-memref-call-conv --convert-cf-to-llvm \
// RUN:   --reconcile-unrealized-casts --kina-lower-parallel-calls \
// RUN:   | FileCheck %s --check-prefix=LLVM

// Each outermost forall becomes a private function over a range of its
// iterations and a call over all of them. A dense static memref passes as
// it is; a strided one as base buffer plus its dynamic offset, rebuilt
// inside; constants are rematerialized, not passed.
// CHECK-LABEL: func.func private @panels_parallel
// CHECK-SAME: (%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[A:.*]]: memref<16x64xf32>, %[[BASE:.*]]: memref<f32>, %[[OFF:.*]]: index, %[[S:.*]]: f32)
// CHECK-SAME: attributes {kina.parallel_body}
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [16, 64], strides: [128, 1]
// CHECK: scf.for %[[T:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: %[[J:.*]] = arith.muli %[[T]], %c16
// CHECK: memref.subview %[[B]][0, %[[J]]] [16, 16]
// CHECK: linalg.fill ins(%[[S]] : f32)
// CHECK-LABEL: func.func @panels
// CHECK: %[[SUB:.*]] = memref.subview %arg1
// CHECK: %[[META:.*]], %[[OFFSET:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[SUB]]
// CHECK: call @panels_parallel(%c0, %c4, %arg0, %[[META]], %[[OFFSET]], %arg3)
// CHECK-NOT: scf.forall
func.func @panels(%a: memref<16x64xf32>, %whole: memref<16x128xf32>, %at: index, %s: f32) {
  %b = memref.subview %whole[0, %at] [16, 64] [1, 1] : memref<16x128xf32> to memref<16x64xf32, strided<[128, 1], offset: ?>>
  scf.forall (%j) = (0) to (64) step (16) {
    %sa = memref.subview %a[0, %j] [16, 16] [1, 1] : memref<16x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %sb = memref.subview %b[0, %j] [16, 16] [1, 1] : memref<16x64xf32, strided<[128, 1], offset: ?>> to memref<16x16xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%s : f32) outs(%sb : memref<16x16xf32, strided<[128, 1], offset: ?>>)
  }
  return
}

// A 2-d forall is linearized (4 x 3 = 12 iterations); nested foralls stay
// in the body as loops.
// CHECK-LABEL: func.func private @grid_parallel
// CHECK: %[[CST:.*]] = arith.constant 1.0
// CHECK: scf.for %[[T:.*]] =
// CHECK: %[[J:.*]] = arith.remui %[[T]], %c3
// CHECK: %[[I:.*]] = arith.divui %[[T]], %c3
// CHECK: scf.forall
// CHECK: memref.store %[[CST]], %{{.*}}[%[[I]], %{{.*}}]
// CHECK-LABEL: func.func @grid
// CHECK: call @grid_parallel(%c0, %c12, %arg0)
func.func @grid(%a: memref<4x6xf32>) {
  %c = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (4, 3) {
    scf.forall (%k) in (2) {
      %col = affine.apply affine_map<(d0, d1) -> (d0 * 2 + d1)>(%j, %k)
      memref.store %c, %a[%i, %col] : memref<4x6xf32>
    }
  }
  return
}

// Lowered to the LLVM dialect (the steps of --kina-to-llvm): each body gets a task that unpacks a
// struct of its arguments, and each call becomes a launch.
// LLVM-LABEL: llvm.func internal @panels_parallel_task
// LLVM-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// LLVM: llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, f32)>
// LLVM: llvm.call @panels_parallel(%[[B]], %[[E]],
// LLVM-LABEL: llvm.func @panels(
// LLVM: %[[STRUCT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, f32)>
// LLVM: %[[TASK:.*]] = llvm.mlir.addressof @panels_parallel_task
// LLVM: llvm.call @kina_parallel_for(%[[TASK]], %[[STRUCT]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// LLVM: llvm.func @kina_parallel_for(!llvm.ptr, !llvm.ptr, i64)
