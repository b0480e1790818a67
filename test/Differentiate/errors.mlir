// RUN: kina-opt %s --kina-differentiate --split-input-file -verify-diagnostics

// A per-device function is differentiated from its arguments' global
// types (which values are the same on every device): without them, a
// located error.
kina.mesh @mesh [x = 2]
func.func @f(%w: !kina.tensor<2xf32, @local>) -> !kina.tensor<f32, @local> {
  %s = kina.sum %w [axis = 0] : (!kina.tensor<2xf32, @local>) -> !kina.tensor<1xf32, @local>
  %r = kina.reshape %s to [] : !kina.tensor<1xf32, @local> -> !kina.tensor<f32, @local>
  return %r : !kina.tensor<f32, @local>
}
func.func @g(%w: !kina.tensor<2xf32, @local>) -> (!kina.tensor<f32, @local>, !kina.tensor<2xf32, @local>) {
  // expected-error @+1 {{differentiates a per-device (@local) function, but cannot tell over which mesh axes an input differs: its argument has no `kina.global` mesh type (--kina-partition=form=spmd gives one)}}
  %v, %d = kina.reverse_mode @f(%w) wrt = [0] : (!kina.tensor<2xf32, @local>) -> (!kina.tensor<f32, @local>, !kina.tensor<2xf32, @local>)
  return %v, %d : !kina.tensor<f32, @local>, !kina.tensor<2xf32, @local>
}

// -----

// The op's types must be those of differentiating its function.
func.func @h(%x: !kina.tensor<4xf32, @host>) -> !kina.tensor<f32, @host> {
  %s = kina.sum %x [axis = 0] : (!kina.tensor<4xf32, @host>) -> !kina.tensor<1xf32, @host>
  %r = kina.reshape %s to [] : !kina.tensor<1xf32, @host> -> !kina.tensor<f32, @host>
  return %r : !kina.tensor<f32, @host>
}
func.func @bad(%x: !kina.tensor<4xf32, @host>) -> (!kina.tensor<f32, @host>, !kina.tensor<3xf32, @host>) {
  // expected-error @+1 {{but differentiating 'h' gives}}
  %v, %d = kina.reverse_mode @h(%x) wrt = [0] : (!kina.tensor<4xf32, @host>) -> (!kina.tensor<f32, @host>, !kina.tensor<3xf32, @host>)
  return %v, %d : !kina.tensor<f32, @host>, !kina.tensor<3xf32, @host>
}
