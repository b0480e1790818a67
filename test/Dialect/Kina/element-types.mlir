// RUN: kina-opt %s | kina-opt | FileCheck %s
// RUN: kina-opt %s -canonicalize | FileCheck %s --check-prefix=FOLD

// Constants of every float type print their value once, in their own
// type where the short decimal reads back to it, else as a double.
// CHECK-LABEL: func.func @constants
// CHECK: kina.constant 1.000000e-01 : !kina.tensor<f64, @host>
// CHECK: kina.constant 9.997550e-02 : !kina.tensor<f16, @host>
// CHECK: kina.constant 1.000000e+00 : !kina.tensor<bf16, @host>
// CHECK: kina.constant 0x7FF0000000000000 : !kina.tensor<f32, @host>
// CHECK: kina.cast %{{.*}} to bf16 : !kina.tensor<4xf32, @host> -> !kina.tensor<4xbf16, @host>
func.func @constants(%x: !kina.tensor<4xf32, @host>) -> (!kina.tensor<f64, @host>, !kina.tensor<f16, @host>, !kina.tensor<bf16, @host>, !kina.tensor<f32, @host>, !kina.tensor<4xbf16, @host>) {
  %a = kina.constant 0.1 : !kina.tensor<f64, @host>
  %b = kina.constant 0.1 : !kina.tensor<f16, @host>
  %c = kina.constant 1.00390625 : !kina.tensor<bf16, @host>
  %d = kina.constant 0x7FF0000000000000 : !kina.tensor<f32, @host>
  %e = kina.cast %x to bf16 : !kina.tensor<4xf32, @host> -> !kina.tensor<4xbf16, @host>
  return %a, %b, %c, %d, %e : !kina.tensor<f64, @host>, !kina.tensor<f16, @host>, !kina.tensor<bf16, @host>, !kina.tensor<f32, @host>, !kina.tensor<4xbf16, @host>
}

// A cast to the operand's own type folds away.
// FOLD-LABEL: func.func @same_type
// FOLD-NOT: kina.cast
// FOLD: return %arg0
func.func @same_type(%x: !kina.tensor<4xf16, @host>) -> !kina.tensor<4xf16, @host> {
  %0 = kina.cast %x to f16 : !kina.tensor<4xf16, @host> -> !kina.tensor<4xf16, @host>
  return %0 : !kina.tensor<4xf16, @host>
}
