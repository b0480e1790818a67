// RUN: kina-opt %s --kina-differentiate --split-input-file -verify-diagnostics

// The per-device form is not differentiated: the global view is.
kina.mesh @mesh [x = 2]
func.func @f(%w: !kina.tensor<2xf32, @local>) -> !kina.tensor<f32, @local> {
  %s = kina.sum %w [axis = 0] : (!kina.tensor<2xf32, @local>) -> !kina.tensor<1xf32, @local>
  %r = kina.reshape %s to [] : !kina.tensor<1xf32, @local> -> !kina.tensor<f32, @local>
  return %r : !kina.tensor<f32, @local>
}
func.func @g(%w: !kina.tensor<2xf32, @local>) -> (!kina.tensor<f32, @local>, !kina.tensor<2xf32, @local>) {
  // expected-error @+1 {{differentiates 'f', a per-device (@local) function: differentiate the global view, before --kina-partition}}
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
