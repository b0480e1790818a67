//===- KinaDialect.td - The kina dialect -------------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINADIALECT_TD
#define KINA_DIALECT_KINADIALECT_TD

include "mlir/IR/OpBase.td"

def Kina_Dialect : Dialect {
  let name = "kina";
  let summary = "Tensor ops of the Kina language, with a placement in every type";
  let description = [{
    The `kina` dialect is what the `.kina` frontend produces: static-shape
    tensors whose type carries a placement (`@host`, or one on the
    program's mesh), and the ops of the language (slice, concat, gather,
    matmul, broadcast, reshape, transpose, softmax, reductions, elementwise
    arithmetic, comparisons and selects) and of its placements (reshards
    and collectives). Every op's result type is
    inferred from its operands and attributes by one shape rule, which the
    verifier, the builders and the frontend share.

    Discardable attributes that cross layers are declared here and
    verified wherever they appear:
    - `kina.entry` (unit, on a `func.func`): the program's `@main` entry,
      exported as `kina_main`;
    - `kina.name` (string, on a function argument): the parameter's source
      name, used in the C header, the signature and Python errors;
    - `kina.parallel_body` (unit, on a `func.func` or `llvm.func`): a loop
      body outlined by `kina-outline-parallel-loops`, launched on the thread
      pool by `kina-lower-parallel-calls`;
    - `kina.global` (a kina tensor type, on an argument or a result of a
      per-device function of `--kina-partition=form=spmd`): the global
      type and placement whose block the device holds, by which a runtime
      distributes arguments and gathers results;
    - `kina.probe` (an integer, on an op with one kina tensor result) and
      `kina.probe_global` (that result's type with its placement): the
      op's value is probe number N of the simulator's divergence report,
      returned after the function's result (the exported forms built with
      probes);
    - `kina.reuses` (an integer, on a function result): the result is
      written into the buffer of that argument (`@reuses(p)` in `.kina`,
      a donated argument): the exported function takes no output buffer
      for it. It stays on the result through `--kina-to-linalg`, where
      the argument is also marked `bufferization.writable`;
    - `kina.per_device` (string, on a `func.func`): the function is the
      per-device form of the program's function of that name (exported as
      `kina_spmd_NAME`), whatever its symbol;
    - `kina.weight` (unit, on a function argument): a weight, the
      parameter that the function's reverseMode differentiates (set by
      `--kina-differentiate`): a split of it over a mesh axis that also
      splits an input is a split at rest (ZeRO-3, FSDP), gathered before
      use; the memory ledger counts it as a weight;
    - `kina.reshard_after_forward` (unit, on a `func.func`): a reverseMode
      function whose weights split at rest are gathered again for the
      backward (`reshard_after_forward=true`, as FSDP2's) instead of kept
      from the forward: the propagation never merges the two gathers;
    - `kina.split_backward` (unit, on a `func.func`): a reverseMode
      function `G` declared `split=true`; `--kina-differentiate` replaces
      it by `G_forward` (F's parameters to F's result and the values the
      backward reads of the forward, named `saved_0`, `saved_1`, ...) and
      `G_backward` (F's parameters, those saved values and the seed, to
      the gradients);
    - `kina.split_inputs` (an i64 array, beside `kina.split_backward`):
      the positions in `wrt` of the gradients computed first
      (`inputs=[...]`): the backward is then `G_input` (F's parameters,
      the saved values and the seed, to those gradients and the values
      the rest reads of it, `handed_0`, ...) and `G_weight` (the same
      inputs and the handed values, to the other gradients) instead of
      `G_backward`;
    - `kina.auto_sharded` (unit, on a `func.func`): every value placed and
      every collective inserted by `--kina-auto-shard`'s plan; the
      propagation leaves the function as it is;
    - `kina.pack_rows` (unit, on a loop): the loop of `kina-tile-matmuls`
      that packs a block of B row by row, whose reads the prefetch passes
      run ahead of. A hint: a loop without it is only not prefetched.
  }];
  let cppNamespace = "::mlir::kina";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$entry,
    "::mlir::StringAttr":$name,
    "::mlir::UnitAttr":$parallel_body,
    "::mlir::TypeAttr":$global,
    "::mlir::IntegerAttr":$probe,
    "::mlir::TypeAttr":$probe_global,
    "::mlir::IntegerAttr":$reuses,
    "::mlir::StringAttr":$per_device,
    "::mlir::UnitAttr":$pack_rows,
    "::mlir::UnitAttr":$weight,
    "::mlir::UnitAttr":$reshard_after_forward,
    "::mlir::UnitAttr":$split_backward,
    "::mlir::DenseI64ArrayAttr":$split_inputs,
    "::mlir::UnitAttr":$auto_sharded
  );
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

#endif // KINA_DIALECT_KINADIALECT_TD
