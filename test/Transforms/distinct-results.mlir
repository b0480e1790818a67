// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-distinct-results))' | FileCheck %s
// RUN: kina-opt %s --pass-pipeline='builtin.module(func.func(kina-distinct-results),buffer-results-to-out-params{hoist-static-allocs=true modify-public-functions=true})' | FileCheck %s --check-prefix=OUT

// A buffer returned twice: the second result is a copy of its own.
// CHECK-LABEL: func.func @twice
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %arg0, %[[A]]
// CHECK: %[[C1:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[C1]]
// CHECK: %[[C2:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[C2]]
// CHECK: return %[[A]], %[[C1]], %[[C2]] :
// Upstream's out-params then take it (they crash on the original).
// OUT: func.func @twice(%[[X:.*]]: memref<4xf32>, %[[OUT0:.*]]: memref<4xf32>, %[[OUT1:.*]]: memref<4xf32>, %[[OUT2:.*]]: memref<4xf32>)
// OUT: memref.copy %[[X]], %[[OUT0]]
// OUT: memref.copy %[[OUT0]], %[[OUT1]]
// OUT: memref.copy %[[OUT0]], %[[OUT2]]
func.func @twice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  return %a, %a, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>
}
