// RUN: kina-opt %s --kina-to-linalg --split-input-file --verify-diagnostics

// The lowering is of programs on one device; a mesh-placed program is
// rejected at its first placed value, not left half converted.
kina.mesh @mesh [x = 2]
// expected-error @below {{--kina-to-linalg lowers programs on one device (@host); this value is placed @sharded(axis=1): run --kina-propagate-sharding and --kina-partition first (the --kina-to-llvm pipeline and --kina-to-so do)}}
func.func @f(%w: !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @sharded(axis=1)> {
  return %w : !kina.tensor<4x8xf32, @sharded(axis=1)>
}

// -----

// expected-error @below {{--kina-to-linalg lowers programs on one device (@host); this program declares a mesh: run --kina-propagate-sharding and --kina-partition first (the --kina-to-llvm pipeline and --kina-to-so do)}}
kina.mesh @mesh [x = 2]
func.func @g(%w: !kina.tensor<4x8xf32, @host>) -> !kina.tensor<4x8xf32, @host> {
  return %w : !kina.tensor<4x8xf32, @host>
}
