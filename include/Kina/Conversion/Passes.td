//===- Passes.td - Kina conversion passes ------------------*- tablegen -*-===//
#ifndef KINA_CONVERSION_PASSES_TD
#define KINA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertKinaToLinalgPass : Pass<"kina-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower the kina dialect to linalg, tensor, arith and math";
  let description = [{
    Converts every kina op to upstream ops on builtin tensors and erases
    placements from types; `func` signatures, calls and returns follow.
    The output names no kina op, type or attribute.

    - `slice` becomes `tensor.extract_slice`; `concat` a chain of
      `tensor.insert_slice` into a `tensor.empty`.
    - `matmul` becomes `linalg.matmul` (rank 2) or `linalg.batch_matmul`
      (batch dims collapsed into one, then expanded back).
    - `softmax` becomes max-reduce, `exp(x - max)`, sum-reduce and divide.
    - `broadcast`, `transpose` become `linalg.broadcast` (a `linalg.generic`
      when a size-1 dim is stretched) and `linalg.transpose`; `reshape`
      becomes `tensor.collapse_shape`/`tensor.expand_shape`.
    - `gather` reads rows at clamped ids, so it never reads out of bounds,
      and asserts (`cf.assert`) that every id was in range. The pass ends
      with the step of `kina-asserts-to-status`: each function that
      gathers (or calls one that does) returns that `i1` as an extra,
      last result; the C ABI turns it into status 1.
    - Before converting, `x @ broadcast(w)` with `w` of rank 2 is
      rewritten (kina to kina) into reshape, a rank-2 matmul with `w`
      itself, reshape: the broadcast copy of the weights is never made.

    Before:
    ```mlir
    %s = kina.slice %w [axis = 1, start = 0, stop = 4]
        : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
    ```
    After:
    ```mlir
    %s = tensor.extract_slice %w[0, 0] [4, 4] [1, 1]
        : tensor<4x8xf32> to tensor<4x4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // KINA_CONVERSION_PASSES_TD
