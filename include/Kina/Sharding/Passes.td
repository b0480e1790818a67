//===- Passes.td - Kina's sharding passes ------------------*- tablegen -*-===//
#ifndef KINA_SHARDING_PASSES_TD
#define KINA_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def PropagateShardingPass
    : Pass<"kina-propagate-sharding", "::mlir::ModuleOp"> {
  let summary = "Give every value a placement; insert the collectives needed";
  let description = [{
    In each function, in order, every op computed per block gets its
    result placement from its operands' and its sharding rule: operands
    that split the same factor (a dim of the iteration space: a batch,
    row or column of a matmul, a dim of an elementwise op) over a mesh
    axis keep it, and the result is split likewise; a split contracting
    factor (a matmul's K) makes the result partial; operands that hold the
    factor whole are cut to match (`all_slice`, which moves nothing).
    Where operands split different factors over one mesh axis, the
    operands whose gathering moves the fewest bytes are gathered. Partial
    operands of ops that are not sums of equally placed values are
    all-reduced; an axis the op needs whole (a slice's, a concat's, a
    softmax's, a gather table's rows) is gathered. Where an annotation
    asks for another placement than the one computed, the collectives
    that convert it follow the op; `kina.reshard`s between mesh
    placements become collectives; those from and to `@host` stay.

    Every collective that moves data comes with a remark at the op that
    forced it, naming the placements involved, the annotations they came
    from and the bytes each device sends (ring algorithms: see
    `bytesSentPerDevice`).

    Before:
    ```mlir
    %z = kina.matmul %x, %w : (!kina.tensor<4x4xf32, @replicated>,
        !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @auto>
    ```
    After:
    ```mlir
    %z = kina.matmul %x, %w : (!kina.tensor<4x4xf32, @replicated>,
        !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @sharded(axis=1)>
    ```
  }];
  let dependentDialects = ["::mlir::kina::KinaDialect"];
}

#endif // KINA_SHARDING_PASSES_TD
