// RUN: kina-opt %s --kina-to-linalg --split-input-file --verify-diagnostics

// The lowering is of code one device runs; a mesh-placed program is
// rejected at its first placed value, not left half converted.
kina.mesh @mesh [x = 2]
// expected-error @below {{--kina-to-linalg lowers code that one device runs (@host, or @local per device); this value is placed @sharded(axis=1): run --kina-propagate-sharding and --kina-partition first (the --kina-to-llvm pipeline and --kina-to-so do)}}
func.func @f(%w: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @sharded(axis=1)> {
  return %w : !kina.tensor<4x8xf32, @sharded(axis=1)>
}

// -----

// A collective in the global view is the partitioner's to remove.
kina.mesh @mesh [x = 2]
func.func @g(%w: !kina.tensor<4x8xf32, @local>) -> !kina.tensor<4x8xf32, @local> {
  // expected-error @below {{this value is placed @replicated}}
  %r = kina.reshard %w : !kina.tensor<4x8xf32, @local> -> !kina.tensor<4x8xf32, @replicated>
  %l = kina.reshard %r : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @local>
  return %l : !kina.tensor<4x8xf32, @local>
}
