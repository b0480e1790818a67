// RUN: kina-opt %s --kina-to-llvm | FileCheck %s --implicit-check-not=kina.
// RUN: kina-opt %s --kina-to-llvm | %stock-mlir-opt > /dev/null

// The whole pipeline: bare pointers for every input, the result as a last
// caller-owned pointer, the gather status as the i1 result, and no call
// into MLIR's runtime libraries (only libc's malloc/free may appear).
// CHECK-NOT: llvm.func @memrefCopy
// CHECK-LABEL: llvm.func @pick
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i1
func.func @pick(%t: !kina.tensor<8x4xf32, @host>, %ids: !kina.tensor<3xi64, @host>) -> !kina.tensor<3x4xf32, @host> {
  %0 = kina.gather %t [%ids] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<3xi64, @host>) -> !kina.tensor<3x4xf32, @host>
  return %0 : !kina.tensor<3x4xf32, @host>
}

// CHECK-LABEL: llvm.func @logits
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
func.func @logits(%r: !kina.tensor<1x4x4xf32, @host>, %w: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host> {
  %wb = kina.broadcast %w to [1, 4, 8] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<1x4x8xf32, @host>
  %0 = kina.matmul %r, %wb : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x8xf32, @host>
  return %0 : !kina.tensor<1x4x8xf32, @host>
}

// A tiled matmul: its vector transfers are unrolled, so no stack slot is
// allocated inside a loop (each would grow the stack per iteration where
// LLVM cannot promote it); the only allocas are in the entry block.
// CHECK-LABEL: llvm.func @tiled
// CHECK-NOT: llvm.alloca {{.*}}vector
// CHECK: llvm.return
func.func @tiled(%a: !kina.tensor<16x16xf32, @host>, %b: !kina.tensor<16x32xf32, @host>) -> !kina.tensor<16x32xf32, @host> {
  %0 = kina.matmul %a, %b : (!kina.tensor<16x16xf32, @host>, !kina.tensor<16x32xf32, @host>) -> !kina.tensor<16x32xf32, @host>
  return %0 : !kina.tensor<16x32xf32, @host>
}
