// RUN: kina-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{kina tensor dimensions must be static and positive, got [0, 4]}}
func.func @zero_dim(%x: !kina.tensor<0x4xf32, @host>)

// -----

// expected-error @+1 {{kina tensor element type must be one of f32, i32, i64, f64, f16, bf16, got 'i16'}}
func.func @bad_element(%x: !kina.tensor<4xi16, @host>)

// -----

// expected-error @+1 {{unknown placement @gpu}}
func.func @bad_placement(%x: !kina.tensor<4xf32, @gpu>)

// -----

// expected-error @+1 {{kina tensor of shape [4294967296, 4294967296] has too many elements}}
func.func @huge(%x: !kina.tensor<4294967296x4294967296xf32, @host>)

// -----

func.func @slice_axis(%x: !kina.tensor<4x8xf32, @host>) {
  // expected-error @+1 {{'kina.slice' op axis 2 is out of range for operand of shape [4, 8] (rank 2)}}
  %0 = kina.slice %x [axis = 2, start = 0, stop = 1] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x1xf32, @host>
  return
}

// -----

func.func @slice_negative_axis(%x: !kina.tensor<4x8xf32, @host>) {
  // expected-error @+1 {{'kina.slice' op axis -1 is out of range for operand of shape [4, 8] (rank 2)}}
  %0 = kina.slice %x [axis = -1, start = 0, stop = 1] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x1xf32, @host>
  return
}

// -----

func.func @slice_past_end(%x: !kina.tensor<4x8xf32, @host>) {
  // expected-error @+1 {{'kina.slice' op range [4, 9) is not a non-empty part of axis 1 (size 8) of operand of shape [4, 8]}}
  %0 = kina.slice %x [axis = 1, start = 4, stop = 9] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x5xf32, @host>
  return
}

// -----

func.func @slice_empty(%x: !kina.tensor<4x8xf32, @host>) {
  // expected-error @+1 {{'kina.slice' op range [3, 3) is not a non-empty part of axis 0 (size 4)}}
  %0 = kina.slice %x [axis = 0, start = 3, stop = 3] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<1x8xf32, @host>
  return
}

// -----

func.func @slice_wrong_result(%x: !kina.tensor<4x8xf32, @host>) {
  // expected-error @+1 {{'kina.slice' op result type '!kina.tensor<4x3xf32, @host>' does not match the inferred type '!kina.tensor<4x4xf32, @host>'}}
  %0 = kina.slice %x [axis = 1, start = 0, stop = 4] : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x3xf32, @host>
  return
}

// -----

func.func @slice_missing_attr(%x: !kina.tensor<4x8xf32, @host>) {
  // expected-error @+1 {{'kina.slice' op requires attribute 'stop'}}
  %0 = "kina.slice"(%x) {axis = 0 : i64, start = 0 : i64} : (!kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x8xf32, @host>
  return
}

// -----

func.func @concat_rank(%a: !kina.tensor<4x4xf32, @host>, %b: !kina.tensor<4xf32, @host>) {
  // expected-error @+1 {{'kina.concat' op operand #0 of shape [4, 4] and operand #1 of shape [4] differ on a dimension other than axis 0}}
  %0 = kina.concat %a, %b [axis = 0] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4xf32, @host>) -> !kina.tensor<8x4xf32, @host>
  return
}

// -----

func.func @concat_other_dim(%a: !kina.tensor<4x4xf32, @host>, %b: !kina.tensor<4x3xf32, @host>) {
  // expected-error @+1 {{'kina.concat' op operand #0 of shape [4, 4] and operand #1 of shape [4, 3] differ on a dimension other than axis 0}}
  %0 = kina.concat %a, %b [axis = 0] : (!kina.tensor<4x4xf32, @host>, !kina.tensor<4x3xf32, @host>) -> !kina.tensor<8x4xf32, @host>
  return
}

// -----

func.func @concat_element(%a: !kina.tensor<4xf32, @host>, %b: !kina.tensor<4xi32, @host>) {
  // expected-error @+1 {{'kina.concat' op operand #0 has element type 'f32' but operand #1 has 'i32'}}
  %0 = kina.concat %a, %b [axis = 0] : (!kina.tensor<4xf32, @host>, !kina.tensor<4xi32, @host>) -> !kina.tensor<8xf32, @host>
  return
}

// -----

func.func @concat_axis(%a: !kina.tensor<4xf32, @host>) {
  // expected-error @+1 {{'kina.concat' op axis 1 is out of range for operand #0 of shape [4] (rank 1)}}
  %0 = kina.concat %a, %a [axis = 1] : (!kina.tensor<4xf32, @host>, !kina.tensor<4xf32, @host>) -> !kina.tensor<8xf32, @host>
  return
}

// -----

func.func @concat_none() {
  // expected-error @+1 {{'kina.concat' op expects at least one operand(s), got 0}}
  %0 = "kina.concat"() {axis = 0 : i64} : () -> !kina.tensor<8xf32, @host>
  return
}

// -----

func.func @gather_float_ids(%t: !kina.tensor<8x4xf32, @host>, %ids: !kina.tensor<4xf32, @host>) {
  // expected-error @+1 {{'kina.gather' op expects ids of element type i32 or i64, got 'f32' of shape [4]}}
  %0 = kina.gather %t [%ids] : (!kina.tensor<8x4xf32, @host>, !kina.tensor<4xf32, @host>) -> !kina.tensor<4x4xf32, @host>
  return
}

// -----

func.func @gather_int_table(%t: !kina.tensor<8x4xi32, @host>, %ids: !kina.tensor<4xi64, @host>) {
  // expected-error @+1 {{'kina.gather' op expects table of a float element type (f32, f64, f16, bf16), got 'i32' of shape [8, 4]}}
  %0 = kina.gather %t [%ids] : (!kina.tensor<8x4xi32, @host>, !kina.tensor<4xi64, @host>) -> !kina.tensor<4x4xi32, @host>
  return
}

// -----

func.func @gather_scalar_table(%t: !kina.tensor<f32, @host>, %ids: !kina.tensor<4xi64, @host>) {
  // expected-error @+1 {{'kina.gather' op expects a table of rank >= 1, got shape []}}
  %0 = kina.gather %t [%ids] : (!kina.tensor<f32, @host>, !kina.tensor<4xi64, @host>) -> !kina.tensor<4xf32, @host>
  return
}

// -----

func.func @scatter_add_ids_shape(%u: !kina.tensor<3x4xf32, @host>, %ids: !kina.tensor<2xi64, @host>) {
  // expected-error @+1 {{'kina.scatter_add' op expects updates whose leading dims are the ids' [2], got shape [3, 4]}}
  %0 = kina.scatter_add %u [%ids] [rows = 8] : (!kina.tensor<3x4xf32, @host>, !kina.tensor<2xi64, @host>) -> !kina.tensor<8x4xf32, @host>
  return
}

// -----

func.func @scatter_add_rows(%u: !kina.tensor<2x4xf32, @host>, %ids: !kina.tensor<2xi64, @host>) {
  // expected-error @+1 {{'kina.scatter_add' op rows must be >= 1, got 0}}
  %0 = kina.scatter_add %u [%ids] [rows = 0] : (!kina.tensor<2x4xf32, @host>, !kina.tensor<2xi64, @host>) -> !kina.tensor<1x4xf32, @host>
  return
}

// -----

func.func @matmul_rank(%a: !kina.tensor<4x4xf32, @host>, %b: !kina.tensor<1x4x4xf32, @host>) {
  // expected-error @+1 {{'kina.matmul' op expects operands of equal rank >= 2, got lhs of shape [4, 4] and rhs of shape [1, 4, 4]}}
  %0 = kina.matmul %a, %b : (!kina.tensor<4x4xf32, @host>, !kina.tensor<1x4x4xf32, @host>) -> !kina.tensor<1x4x4xf32, @host>
  return
}

// -----

func.func @matmul_vector(%a: !kina.tensor<4xf32, @host>) {
  // expected-error @+1 {{'kina.matmul' op expects operands of equal rank >= 2, got lhs of shape [4] and rhs of shape [4]}}
  %0 = kina.matmul %a, %a : (!kina.tensor<4xf32, @host>, !kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host>
  return
}

// -----

func.func @matmul_contracting(%a: !kina.tensor<1x4x4xf32, @host>, %b: !kina.tensor<1x8x4xf32, @host>) {
  // expected-error @+1 {{'kina.matmul' op contracting dimensions differ (4 vs 8): lhs of shape [1, 4, 4] and rhs of shape [1, 8, 4]}}
  %0 = kina.matmul %a, %b : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x8x4xf32, @host>) -> !kina.tensor<1x4x4xf32, @host>
  return
}

// -----

func.func @matmul_batch(%a: !kina.tensor<2x4x4xf32, @host>, %b: !kina.tensor<3x4x4xf32, @host>) {
  // expected-error @+1 {{'kina.matmul' op batch dimensions differ: lhs of shape [2, 4, 4] and rhs of shape [3, 4, 4]}}
  %0 = kina.matmul %a, %b : (!kina.tensor<2x4x4xf32, @host>, !kina.tensor<3x4x4xf32, @host>) -> !kina.tensor<2x4x4xf32, @host>
  return
}

// -----

func.func @matmul_int(%a: !kina.tensor<4x4xi32, @host>) {
  // expected-error @+1 {{'kina.matmul' op expects lhs of a float element type (f32, f64, f16, bf16), got 'i32' of shape [4, 4]}}
  %0 = kina.matmul %a, %a : (!kina.tensor<4x4xi32, @host>, !kina.tensor<4x4xi32, @host>) -> !kina.tensor<4x4xi32, @host>
  return
}

// -----

func.func @broadcast_mismatch(%x: !kina.tensor<3x4xf32, @host>) {
  // expected-error @+1 {{'kina.broadcast' op cannot broadcast operand of shape [3, 4] to shape [1, 2, 4]: dimension 0 is 3}}
  %0 = kina.broadcast %x to [1, 2, 4] : !kina.tensor<3x4xf32, @host> -> !kina.tensor<1x2x4xf32, @host>
  return
}

// -----

func.func @broadcast_fewer_dims(%x: !kina.tensor<2x3x4xf32, @host>) {
  // expected-error @+1 {{'kina.broadcast' op cannot broadcast operand of shape [2, 3, 4] to shape [3, 4]: the target has fewer dimensions}}
  %0 = kina.broadcast %x to [3, 4] : !kina.tensor<2x3x4xf32, @host> -> !kina.tensor<3x4xf32, @host>
  return
}

// -----

func.func @reshape_count(%x: !kina.tensor<1x4x4xf32, @host>) {
  // expected-error @+1 {{'kina.reshape' op cannot reshape operand of shape [1, 4, 4] (16 elements) to shape [1, 4, 3]}}
  %0 = kina.reshape %x to [1, 4, 3] : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x3xf32, @host>
  return
}

// -----

func.func @reshape_negative(%x: !kina.tensor<4xf32, @host>) {
  // expected-error @+1 {{'kina.reshape' op cannot reshape operand of shape [4] (4 elements) to shape [-2, -2]}}
  %0 = "kina.reshape"(%x) {shape = array<i64: -2, -2>} : (!kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @host>
  return
}

// -----

func.func @transpose_repeat(%x: !kina.tensor<2x3xf32, @host>) {
  // expected-error @+1 {{'kina.transpose' op permutation [0, 0] is not a permutation of 0..1 for operand of shape [2, 3]}}
  %0 = kina.transpose %x perm [0, 0] : !kina.tensor<2x3xf32, @host> -> !kina.tensor<2x2xf32, @host>
  return
}

// -----

func.func @transpose_length(%x: !kina.tensor<2x3xf32, @host>) {
  // expected-error @+1 {{'kina.transpose' op permutation [1, 0, 2] is not a permutation of 0..1 for operand of shape [2, 3]}}
  %0 = kina.transpose %x perm [1, 0, 2] : !kina.tensor<2x3xf32, @host> -> !kina.tensor<3x2xf32, @host>
  return
}

// -----

func.func @softmax_axis(%x: !kina.tensor<2x3xf32, @host>) {
  // expected-error @+1 {{'kina.softmax' op axis 2 is out of range for operand of shape [2, 3] (rank 2)}}
  %0 = kina.softmax %x [axis = 2] : !kina.tensor<2x3xf32, @host>
  return
}

// -----

func.func @softmax_int(%x: !kina.tensor<2x3xi64, @host>) {
  // expected-error @+1 {{'kina.softmax' op expects operand of a float element type (f32, f64, f16, bf16), got 'i64' of shape [2, 3]}}
  %0 = kina.softmax %x [axis = 1] : !kina.tensor<2x3xi64, @host>
  return
}

// -----

func.func @add_shapes(%a: !kina.tensor<1x4x4xf32, @host>, %b: !kina.tensor<4x4xf32, @host>) {
  // expected-error @+1 {{'kina.add' op expects operands of identical shape, got lhs of shape [1, 4, 4] and rhs of shape [4, 4] (broadcast one explicitly: broadcast(x) or broadcast[shape=[...]] x)}}
  %0 = "kina.add"(%a, %b) : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<4x4xf32, @host>) -> !kina.tensor<1x4x4xf32, @host>
  return
}

// -----

func.func @mul_elements(%a: !kina.tensor<4xf32, @host>, %b: !kina.tensor<4xi64, @host>) {
  // expected-error @+1 {{'kina.mul' op lhs has element type 'f32' but rhs has 'i64'}}
  %0 = "kina.mul"(%a, %b) : (!kina.tensor<4xf32, @host>, !kina.tensor<4xi64, @host>) -> !kina.tensor<4xf32, @host>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'kina.constant' op result type '!kina.tensor<4xf32, @host>' does not match the inferred type '!kina.tensor<f32, @host>'}}
  %0 = kina.constant 1.0 : !kina.tensor<4xf32, @host>
  return
}

// -----

func.func @not_a_kina_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kina.neg' op operand #0 must be kina tensor, but got 'tensor<4xf32>'}}
  %0 = "kina.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// The dialect's discardable attributes are verified wherever they appear.
// expected-error @below {{'kina.entry' is a unit attribute of a function}}
func.func @entry_not_unit() attributes {kina.entry = 1 : i64} {
  return
}

// -----

// expected-error @below {{'kina.parallel_body' is a unit attribute of a function}}
module attributes {kina.parallel_body} {
}

// -----

// expected-error @below {{'kina.per_device' is the name of the function a function is the per-device form of}}
module attributes {kina.per_device = "f"} {
}

// -----

// expected-error @below {{'kina.pack_rows' is a unit attribute of a loop}}
func.func @pack_rows_on_function() attributes {kina.pack_rows} {
  return
}

// -----

// expected-error @below {{'kina.name' names a function argument; it belongs in the argument's attributes}}
func.func @name_on_function() attributes {kina.name = "x"} {
  return
}

// -----

// expected-error @below {{'kina.name' of argument 0 must be a non-empty string}}
func.func @name_not_string(%x: !kina.tensor<4xf32, @host> {kina.name = 3 : i64}) {
  return
}

// -----

// expected-error @below {{unknown kina attribute 'kina.bogus'}}
func.func @unknown_attribute() attributes {kina.bogus} {
  return
}

// -----

// expected-error @below {{unknown kina argument attribute 'kina.entry'}}
func.func @entry_on_argument(%x: !kina.tensor<4xf32, @host> {kina.entry}) {
  return
}

// -----

func.func @sum_axis(%x: !kina.tensor<2x3xf32, @host>) {
  // expected-error @+1 {{'kina.sum' op axis -1 is out of range for operand of shape [2, 3] (rank 2)}}
  %0 = kina.sum %x [axis = -1] : (!kina.tensor<2x3xf32, @host>) -> !kina.tensor<2x1xf32, @host>
  return
}

// -----

func.func @mean_keeps_the_axis(%x: !kina.tensor<2x3xf32, @host>) {
  // expected-error @+1 {{'kina.mean' op result type '!kina.tensor<2xf32, @host>' does not match the inferred type '!kina.tensor<2x1xf32, @host>'}}
  %0 = kina.mean %x [axis = 1] : (!kina.tensor<2x3xf32, @host>) -> !kina.tensor<2xf32, @host>
  return
}

// -----

func.func @max_int(%x: !kina.tensor<2x3xi32, @host>) {
  // expected-error @+1 {{'kina.max' op expects operand of a float element type (f32, f64, f16, bf16), got 'i32' of shape [2, 3]}}
  %0 = kina.max %x [axis = 0] : (!kina.tensor<2x3xi32, @host>) -> !kina.tensor<1x3xi32, @host>
  return
}

// -----

func.func @tanh_int(%x: !kina.tensor<4xi64, @host>) {
  // expected-error @+1 {{'kina.tanh' op expects operand of a float element type (f32, f64, f16, bf16), got 'i64' of shape [4]}}
  %0 = kina.tanh %x : !kina.tensor<4xi64, @host>
  return
}

// -----

func.func @cast_to_integer(%x: !kina.tensor<4xf32, @host>) {
  // expected-error @+1 {{'kina.cast' op casts to a float element type (f32, f64, f16, bf16), got 'i32'}}
  %0 = kina.cast %x to i32 : !kina.tensor<4xf32, @host> -> !kina.tensor<4xi32, @host>
  return
}

// -----

func.func @mixed_matmul(%a: !kina.tensor<2x4xf32, @host>, %b: !kina.tensor<4x2xbf16, @host>) {
  // expected-error @+1 {{'kina.matmul' op lhs has element type 'f32' but rhs has 'bf16'}}
  %0 = kina.matmul %a, %b : (!kina.tensor<2x4xf32, @host>, !kina.tensor<4x2xbf16, @host>) -> !kina.tensor<2x2xf32, @host>
  return
}

// -----

func.func @integer_constant() {
  // expected-error @+1 {{expected a kina tensor of a float element type, got '!kina.tensor<i32, @host>'}}
  %0 = kina.constant 1.0 : !kina.tensor<i32, @host>
  return
}
