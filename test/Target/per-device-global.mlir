// A per-device program compiles on its own (per-device exports only),
// when each local type is a device's block of its `kina.global` type.
// RUN: kina-translate --kina-to-so %s -o %t.so --emit-header
// RUN: FileCheck %s --check-prefix=HEADER < %t.h
// RUN: sed "s/@sharded(axis=1, over=y)>, kina.name/@replicated>, kina.name/" %s | not kina-translate --kina-to-so -o %t.bad.so 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: sed 's/over=y/over=z/' %s | not kina-translate --kina-to-so -o %t.axis.so 2>&1 | FileCheck %s --check-prefix=AXIS

// HEADER: int32_t kina_spmd_f(const struct kina_device *device, const float *x, float *out);
// HEADER-NOT: kina_f(
// BAD: error: 'f': '!kina.tensor<8x8xf32, @local>' is not a device's block of its global type '!kina.tensor<8x16xf32, @replicated>' on the mesh
// AXIS: error: 'f': '!kina.tensor<8x8xf32, @local>' is not a device's block of its global type

kina.mesh @mesh [y = 2]
func.func @f(%arg0: !kina.tensor<8x8xf32, @local> {kina.global = !kina.tensor<8x16xf32, @sharded(axis=1, over=y)>, kina.name = "x"}) -> (!kina.tensor<8x8xf32, @local> {kina.global = !kina.tensor<8x16xf32, @sharded(axis=1, over=y)>}) {
  %0 = kina.add %arg0, %arg0 : !kina.tensor<8x8xf32, @local>
  return %0 : !kina.tensor<8x8xf32, @local>
}
