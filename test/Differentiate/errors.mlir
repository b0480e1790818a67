// RUN: kina-opt %s --kina-differentiate --split-input-file -verify-diagnostics

// A mesh-placed function is not differentiated in this version.
kina.mesh @mesh [x = 2]
func.func @f(%w: !kina.tensor<4xf32, @sharded(axis = 0)>) -> !kina.tensor<f32, @replicated> {
  %s = kina.sum %w [axis = 0] : (!kina.tensor<4xf32, @sharded(axis = 0)>) -> !kina.tensor<1xf32, @replicated>
  %r = kina.reshape %s to [] : !kina.tensor<1xf32, @replicated> -> !kina.tensor<f32, @replicated>
  return %r : !kina.tensor<f32, @replicated>
}
func.func @g(%w: !kina.tensor<4xf32, @sharded(axis = 0)>) -> (!kina.tensor<f32, @replicated>, !kina.tensor<4xf32, @sharded(axis = 0)>) {
  // expected-error @+1 {{differentiates 'f', whose parameters or result are placed on a mesh: not supported in this version}}
  %v, %d = kina.reverse_mode @f(%w) wrt = [0] : (!kina.tensor<4xf32, @sharded(axis = 0)>) -> (!kina.tensor<f32, @replicated>, !kina.tensor<4xf32, @sharded(axis = 0)>)
  return %v, %d : !kina.tensor<f32, @replicated>, !kina.tensor<4xf32, @sharded(axis = 0)>
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
