//===- Passes.td - Kina conversion passes ------------------*- tablegen -*-===//
#ifndef KINA_CONVERSION_PASSES_TD
#define KINA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

// `--kina-to-linalg` is the pipeline of the passes below, in this order:
// prepare, convert, asserts to status (kina-asserts-to-status), erase the
// mesh, drop the kina attributes (lib/Conversion/KinaToLinalg/Pipeline.cpp).
// Its output names no kina op, type or attribute, and stock mlir-opt reads
// it.

def PrepareForLinalgPass
    : Pass<"kina-prepare-for-linalg", "::mlir::ModuleOp"> {
  let summary = "Kina-to-kina rewrites that decide how ops lower";
  let description = [{
    Decisions about how an op lowers that depend on its neighbours, made
    on kina so that each lowering pattern reads only its own op: `x @
    broadcast(w)` with `w` of rank 2 becomes reshape, a rank-2 matmul with
    `w` itself, reshape (the broadcast copy of the weights is never made);
    a matmul of unit batch dims becomes a rank-2 one; a transpose of a
    broadcast becomes a broadcast of a transpose; a broadcast that adds
    only unit dims becomes a reshape; the batch sum of per-batch weight
    gradients becomes one product over every row (PrepareForLinalg.cpp
    lists them). Only these rewrites: folding is --canonicalize's.
  }];
}

def ConvertKinaToLinalgPass
    : Pass<"kina-convert-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Convert the kina dialect to linalg, tensor, arith and math";
  let description = [{
    Converts every kina op to upstream ops on builtin tensors and erases
    placements from types; `func` signatures, calls and returns follow.
    The input is code one device runs (`@host`, or `@local` per device):
    a value still placed on the mesh is an error naming its placement.
    The gather's run-time check stays a `cf.assert` (kina-asserts-to-status
    turns it into a status), and the mesh, which the collectives read
    while they lower, stays (kina-erase-mesh).

    - `slice` becomes `tensor.extract_slice`; `concat` a chain of
      `tensor.insert_slice` into a `tensor.empty`.
    - `matmul` becomes `linalg.matmul` (rank 2) or `linalg.batch_matmul`
      (batch dims collapsed into one, then expanded back).
    - `softmax` becomes max-reduce, `exp(x - max)`, sum-reduce and divide.
    - `broadcast`, `transpose` become `linalg.broadcast` (a `linalg.generic`
      when a size-1 dim is stretched) and `linalg.transpose`; `reshape`
      becomes `tensor.collapse_shape`/`tensor.expand_shape`.
    - `gather` reads rows at clamped ids, so it never reads out of bounds,
      and asserts (`cf.assert`) that every id was in range.

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

def EraseMeshPass : Pass<"kina-erase-mesh", "::mlir::ModuleOp"> {
  let summary = "Erase the kina.mesh and kina.pipeline declarations";
  let description = [{
    After the lowering, the mesh and pipeline declarations are the last
    kina ops of a module; they go, so that the module is upstream IR only.
  }];
}

def DropKinaAttributesPass
    : Pass<"kina-drop-kina-attributes", "::mlir::ModuleOp"> {
  let summary = "Drop the kina.* attributes of functions";
  let description = [{
    Drops the `kina.*` discardable attributes of functions, their
    arguments and their results (parameter names, the entry mark, a
    per-device value's global type), so that stock mlir-opt reads the
    module. A result's `kina.reuses` (an integer) stays for the
    bufferization (kina-write-donated-results), and the argument it names
    is marked `bufferization.writable`.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

#endif // KINA_CONVERSION_PASSES_TD
