//===- Passes.td - Kina transformation passes --------------*- tablegen -*-===//
#ifndef KINA_TRANSFORMS_PASSES_TD
#define KINA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CopiesToLinalgPass : Pass<"kina-copies-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    `memref.copy` between non-contiguous memrefs lowers to a call of
    `memrefCopy` from MLIR's C runner library. Kina's shared objects need
    nothing beyond libc and libm, so every copy becomes a `linalg.copy`,
    which later lowers to loops.

    Before:
    ```mlir
    memref.copy %a, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
    ```
    After:
    ```mlir
    linalg.copy ins(%a : memref<4x4xf32, strided<[8, 1]>>)
                outs(%b : memref<4x4xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // KINA_TRANSFORMS_PASSES_TD
