// RUN: kina-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{'kina.mesh' op a mesh needs at least one axis}}
kina.mesh @mesh []

// -----

// expected-error @below {{'kina.mesh' op mesh axis 'x' has 0 devices; each axis needs at least one}}
kina.mesh @mesh [x = 0]

// -----

// expected-error @below {{'kina.mesh' op the mesh [8, 16] has more than 64 devices, the most supported}}
kina.mesh @mesh [a = 8, b = 16]

// -----

// expected-error @below {{'kina.mesh' op mesh axis name 'a' is repeated}}
kina.mesh @mesh [a = 2, a = 2]

// -----

// expected-error @below {{'kina.mesh' op the mesh is named @mesh}}
kina.mesh @devices [x = 2]

// -----

kina.mesh @mesh [x = 2]
// expected-error @below {{'kina.mesh' op a module declares at most one mesh}}
kina.mesh @mesh [y = 2]

// -----

// Placement attributes are checked as they are parsed.
// expected-error @below {{tensor axis 1 is split over two mesh axes, which is not supported}}
func.func @axis_twice(%x: !kina.tensor<4x8xf32, @sharded(axis=[1, 1], over=[a, b])>)

// -----

// expected-error @below {{mesh axis 'a' is used for two tensor axes}}
func.func @mesh_axis_twice(%x: !kina.tensor<4x8xf32, @sharded(axis=[0, 1], over=[a, a])>)

// -----

// expected-error @below {{placement @sharded(axis=2) splits axis 2, out of range for shape [4, 8] (rank 2)}}
func.func @out_of_range(%x: !kina.tensor<4x8xf32, @sharded(axis=2)>)

// -----

// expected-error @below {{unknown placement @everywhere}}
func.func @unknown(%x: !kina.tensor<4x8xf32, @everywhere>)

// -----

// Ops check their placements against the module's mesh.
kina.mesh @mesh [x = 3]
func.func @not_divisible(%x: !kina.tensor<4x8xf32, @sharded(axis=1)>) {
  // expected-error @below {{'kina.neg' op placement @sharded(axis=1) cuts axis 1 of size 8 over mesh axis 'x' of size 3, which does not divide it}}
  %0 = kina.neg %x : (!kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @auto>
  return
}

// -----

func.func @no_mesh(%x: !kina.tensor<4x8xf32, @replicated>) {
  // expected-error @below {{'kina.neg' op placement @replicated needs a mesh, and the program declares none}}
  %0 = kina.neg %x : (!kina.tensor<4x8xf32, @replicated>) -> !kina.tensor<4x8xf32, @auto>
  return
}

// -----

kina.mesh @mesh [heads = 2]
func.func @unknown_axis(%x: !kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>) {
  // expected-error @below {{'kina.neg' op placement @sharded(axis=1, over=vocab) names mesh axis 'vocab', but the mesh's axes are heads}}
  %0 = kina.neg %x : (!kina.tensor<4x8xf32, @sharded(axis=1, over=vocab)>) -> !kina.tensor<4x8xf32, @auto>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @mixed(%a: !kina.tensor<4xf32, @replicated>, %b: !kina.tensor<4xf32, @host>) {
  // expected-error @below {{'kina.add' op operands mix placements: operand #0 is @replicated but operand #1 is @host}}
  %0 = kina.add %a, %b : (!kina.tensor<4xf32, @replicated>, !kina.tensor<4xf32, @host>) -> !kina.tensor<4xf32, @auto>
  return
}

// -----

// A result of mesh operands is on the mesh: never @host.
kina.mesh @mesh [x = 2]
func.func @host_result(%a: !kina.tensor<4xf32, @replicated>) {
  // expected-error @below {{'kina.neg' op result type '!kina.tensor<4xf32, @host>' does not match the inferred type '!kina.tensor<4xf32, @auto>'}}
  %0 = kina.neg %a : (!kina.tensor<4xf32, @replicated>) -> !kina.tensor<4xf32, @host>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @gather_not_split(%a: !kina.tensor<4x8xf32, @replicated>) {
  // expected-error @below {{'kina.all_gather' op needs axis 1 split over 'x', but the operand is @replicated}}
  %0 = kina.all_gather %a[axis = 1, over = "x"] : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @replicated>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @wrong_result(%a: !kina.tensor<4x8xf32, @sharded(axis=1)>) {
  // expected-error @below {{'kina.all_gather' op result type '!kina.tensor<4x8xf32, @sharded(axis=1)>' does not match the inferred type '!kina.tensor<4x8xf32, @replicated>'}}
  %0 = kina.all_gather %a[axis = 1, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @unknown_over(%a: !kina.tensor<4x8xf32, @sharded(axis=1)>) {
  // expected-error @below {{'kina.all_gather' op names mesh axis 'y', but the mesh's axes are x}}
  %0 = kina.all_gather %a[axis = 1, over = "y"] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<4x8xf32, @replicated>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @slice_taken(%a: !kina.tensor<4x8xf32, @sharded(axis=1)>) {
  // expected-error @below {{'kina.all_slice' op cannot cut axis 0 over 'x': the operand is @sharded(axis=1)}}
  %0 = kina.all_slice %a[axis = 0, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<4x8xf32, @sharded(axis=0)>
  return
}

// -----

kina.mesh @mesh [x = 3]
func.func @slice_not_divisible(%a: !kina.tensor<4x8xf32, @local>) {
  // expected-error @below {{'kina.all_slice' op axis 1 of size 8 does not divide by mesh axis 'x' of size 3}}
  %0 = kina.all_slice %a[axis = 1, over = "x"] : !kina.tensor<4x8xf32, @local> -> !kina.tensor<4x2xf32, @local>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @reduce_max_global(%a: !kina.tensor<4xf32, @partial>) {
  // expected-error @below {{'kina.all_reduce' op reduces partial sums in the global view; 'max' exists on per-device (@local) values only}}
  %0 = kina.all_reduce %a[kind = max, over = "x"] : !kina.tensor<4xf32, @partial> -> !kina.tensor<4xf32, @replicated>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @reduce_not_partial(%a: !kina.tensor<4xf32, @replicated>) {
  // expected-error @below {{'kina.all_reduce' op needs an operand partial over 'x', but it is @replicated}}
  %0 = kina.all_reduce %a[kind = sum, over = "x"] : !kina.tensor<4xf32, @replicated> -> !kina.tensor<4xf32, @replicated>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @collective_on_host(%a: !kina.tensor<4xf32, @host>) {
  // expected-error @below {{'kina.all_slice' op all_slice needs a mesh-placed (decided) or per-device (@local) operand, got @host}}
  %0 = kina.all_slice %a[axis = 0, over = "x"] : !kina.tensor<4xf32, @host> -> !kina.tensor<4xf32, @host>
  return
}

// -----

kina.mesh @mesh [x = 2]
func.func @to_itself(%a: !kina.tensor<4x8xf32, @sharded(axis=1)>) {
  // expected-error @below {{'kina.all_to_all' op moves a split from axis 1 to itself}}
  %0 = kina.all_to_all %a[from = 1, to = 1, over = "x"] : !kina.tensor<4x8xf32, @sharded(axis=1)> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
  return
}

// -----

// Ops that use an invalid mesh report nothing more (and divide by nothing).
// expected-error @below {{'kina.mesh' op mesh axis 'x' has 0 devices; each axis needs at least one}}
kina.mesh @mesh [x = 0]
func.func @zero_devices(%a: !kina.tensor<4xf32, @sharded(axis=0)>) {
  %0 = kina.neg %a : (!kina.tensor<4xf32, @sharded(axis=0)>) -> !kina.tensor<4xf32, @auto>
  %1 = kina.all_slice %a[axis = 0, over = "x"] : !kina.tensor<4xf32, @sharded(axis=0)> -> !kina.tensor<4xf32, @sharded(axis=0)>
  return
}

// -----

kina.mesh @mesh [pp = 4]
func.func @permute_global(%a: !kina.tensor<4x8xf32, @sharded(axis=0, over=pp)>) {
  // expected-error @below {{'kina.permute' op moves blocks between devices: it exists on per-device (@local) values only}}
  %0 = kina.permute %a [shift = 1, over = "pp"] : !kina.tensor<4x8xf32, @sharded(axis=0, over=pp)> -> !kina.tensor<4x8xf32, @sharded(axis=0, over=pp)>
  return
}

// -----

kina.mesh @mesh [pp = 4]
func.func @permute_by_zero(%a: !kina.tensor<4x8xf32, @local>) {
  // expected-error @below {{'kina.permute' op shift 0 over 'pp' (size 4) must be nonzero and within (-4, 4)}}
  %0 = kina.permute %a [shift = 0, over = "pp"] : !kina.tensor<4x8xf32, @local> -> !kina.tensor<4x8xf32, @local>
  return
}

// -----

kina.mesh @mesh [pp = 4]
func.func @permute_too_far(%a: !kina.tensor<4x8xf32, @local>) {
  // expected-error @below {{'kina.permute' op shift -4 over 'pp' (size 4) must be nonzero and within (-4, 4)}}
  %0 = kina.permute %a [shift = -4, over = "pp", cyclic] : !kina.tensor<4x8xf32, @local> -> !kina.tensor<4x8xf32, @local>
  return
}
