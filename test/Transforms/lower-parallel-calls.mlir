// RUN: kina-opt %s --kina-lower-parallel-calls --split-input-file --verify-diagnostics | FileCheck %s

// A body outlined by kina-outline-parallel-loops, once in the LLVM dialect:
// it gets a task that loads its captures from a struct and calls it, and
// the call over all iterations becomes: store the captures in a struct
// (allocated once, in the caller's entry block), launch on the pool.
// CHECK-LABEL: llvm.func internal @body_task
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: %[[P:.*]] = llvm.load %[[F0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: %[[S:.*]] = llvm.load %[[F1]] : !llvm.ptr -> f32
// CHECK: llvm.call @body(%[[BEGIN]], %[[END]], %[[P]], %[[S]])
// CHECK-LABEL: llvm.func @caller
// CHECK-SAME: (%[[ARG_P:.*]]: !llvm.ptr, %[[ARG_S:.*]]: f32)
// CHECK: %[[STRUCT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32)>
// CHECK: %[[N:.*]] = llvm.mlir.constant(12 : i64) : i64
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[STRUCT]][0, 0]
// CHECK: llvm.store %[[ARG_P]], %[[G0]]
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[STRUCT]][0, 1]
// CHECK: llvm.store %[[ARG_S]], %[[G1]]
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @body_task
// CHECK: llvm.call @kina_parallel_for(%[[TASK]], %[[STRUCT]], %[[N]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: llvm.call @body(
// CHECK: llvm.func @kina_parallel_for(!llvm.ptr, !llvm.ptr, i64)
llvm.func internal @body(%begin: i64, %end: i64, %p: !llvm.ptr, %s: f32) attributes {kina.parallel_body} {
  llvm.return
}
llvm.func @caller(%p: !llvm.ptr, %s: f32) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %n = llvm.mlir.constant(12 : i64) : i64
  llvm.call @body(%zero, %n, %p, %s) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}

// -----

// Functions that are not parallel bodies are left alone.
// CHECK-LABEL: llvm.func @plain
// CHECK: llvm.call @helper
// CHECK-NOT: kina_parallel_for
llvm.func @helper(%begin: i64, %end: i64) {
  llvm.return
}
llvm.func @plain() {
  %zero = llvm.mlir.constant(0 : i64) : i64
  llvm.call @helper(%zero, %zero) : (i64, i64) -> ()
  llvm.return
}

// -----

// expected-error @below {{a parallel body takes (i64 begin, i64 end, ...)}}
llvm.func internal @bad_body(%begin: i32) attributes {kina.parallel_body} {
  llvm.return
}

// -----

llvm.func internal @body(%begin: i64, %end: i64) attributes {kina.parallel_body} {
  llvm.return
}
llvm.func @caller(%from: i64) {
  %n = llvm.mlir.constant(12 : i64) : i64
  // expected-error @below {{a parallel body is launched from iteration 0}}
  llvm.call @body(%from, %n) : (i64, i64) -> ()
  llvm.return
}
