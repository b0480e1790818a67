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

def TileMatmulsPass : Pass<"kina-tile-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg.matmul for the caches and registers, vectorize";
  let description = [{
    For each `linalg.matmul` on tensors whose M and N the register tile
    (`tile-m` x `tile-n`, 8 x 32 by default: 16 accumulators of 16 floats on
    AVX-512) divides: cache tiles (up to 64 x 256 x 256, chosen to divide the
    static sizes) visited in N, K, M order, then register tiles with one
    step of K, vectorized to `vector.contract` and lowered as outer products
    (FMAs). Other matmuls keep their loops.
    Run `loop-invariant-subset-hoisting` after it, so that the accumulator
    tile is carried through the K loop in registers.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"8",
           "rows of the register tile">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"32",
           "columns of the register tile (a multiple of the vector width)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // KINA_TRANSFORMS_PASSES_TD
