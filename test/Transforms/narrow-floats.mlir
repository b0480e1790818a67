// RUN: kina-opt %s --kina-narrow-floats | FileCheck %s

// Each op on f16 or bf16 computes in f32 and rounds its own result: a
// product feeding a sum is rounded before the sum (upstream's emulation
// would keep the chain in f32).
// CHECK-LABEL: func.func @f16_chain
// CHECK-SAME: (%[[A:.*]]: f16, %[[B:.*]]: f16, %[[C:.*]]: f16)
// CHECK-DAG: %[[WB:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-DAG: %[[WC:.*]] = arith.extf %[[C]] : f16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[WB]], %[[WC]] : f32
// CHECK: %[[PR:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-DAG: %[[WA:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-DAG: %[[WP:.*]] = arith.extf %[[PR]] : f16 to f32
// CHECK: %[[S:.*]] = arith.addf %[[WA]], %[[WP]] : f32
// CHECK: %[[SR:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK: return %[[SR]]
func.func @f16_chain(%a: f16, %b: f16, %c: f16) -> f16 {
  %p = arith.mulf %b, %c : f16
  %s = arith.addf %a, %p : f16
  return %s : f16
}

// bf16's conversions become integer code: no truncf to bf16 is left for
// LLVM to turn into a compiler-rt call; a comparison has no float result.
// The rounding chooses the NaN's word among 32-bit integers (a select of
// bf16 values would make the x86 backend widen them).
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[SUM]], %[[SUM]] : f32
// CHECK: %[[WORD:.*]] = arith.select %[[NAN]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[HALF:.*]] = arith.trunci %[[WORD]] : i32 to i16
// CHECK: arith.bitcast %[[HALF]] : i16 to bf16
func.func @bf16(%a: bf16, %b: bf16) -> (i1, bf16) {
  %lt = arith.cmpf olt, %a, %b : bf16
  %s = arith.addf %a, %b : bf16
  return %lt, %s : i1, bf16
}
