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

def PartitionPass : Pass<"kina-partition", "::mlir::ModuleOp"> {
  let summary = "Turn a propagated mesh-placed program into per-shard code";
  let description = [{
    `form=host` (the default) is the hand-written splits' form
    (docs/storylm0.md): every shard is
    ordinary ops on one host, all types `@host`, and every function keeps
    its global signature. A mesh-placed value becomes the blocks its
    devices hold; devices that differ only on mesh axes the value is
    replicated over share one block, computed once. Each op computes block
    by block on local shapes (attributes that name a shape, as a
    broadcast's or a reshape's, made local); `all_gather` becomes a
    `concat` of the blocks in device order, `all_reduce` a chain of `add`s
    in device order, `all_slice` a `slice`, `reduce_scatter` both, and
    `all_to_all` a `concat` then a `slice`. A parameter's blocks are
    slices of it; a result is assembled from its blocks with `concat`s.
    The mesh is erased. Run `--kina-propagate-sharding` first.

    `form=spmd` is the per-device form: each mesh-placed function is
    retyped in place to what one device holds (`@local`, local shapes),
    every op computes on blocks, and each collective stays, in its
    per-device view (`all_gather` grows the axis by the mesh axis size, and
    so on). Each argument and result records its global type
    (`kina.global`), by which a runtime distributes arguments and gathers
    results; functions on the host (an `@main` of host placeholders) are
    the host form's and are left out. The mesh stays.

    Before (a vocab-split lm_head, propagated):
    ```mlir
    %z = kina.matmul %r, %w : (!kina.tensor<4x4xf32, @replicated>,
        !kina.tensor<4x8xf32, @sharded(axis=1)>) -> !kina.tensor<4x8xf32, @sharded(axis=1)>
    %l = kina.all_gather %z[axis = 1, over = "x"] : ... -> !kina.tensor<4x8xf32, @replicated>
    ```
    After:
    ```mlir
    %w0 = kina.slice %w[axis = 1, start = 0, stop = 4] : ...
    %w1 = kina.slice %w[axis = 1, start = 4, stop = 8] : ...
    %z0 = kina.matmul %r, %w0 : ...
    %z1 = kina.matmul %r, %w1 : ...
    %l = kina.concat %z0, %z1[axis = 1] : ...
    ```
  }];
  let options = [
    Option<"form", "form", "std::string", /*default=*/"\"host\"",
           "host: shards as ordinary ops on one host; spmd: per-device "
           "functions with collectives">,
  ];
  let dependentDialects = ["::mlir::kina::KinaDialect"];
}

def CostPass : Pass<"kina-cost", "::mlir::ModuleOp"> {
  let summary = "Say, per function, what it computes, holds and sends";
  let description = [{
    The static cost view, before anything runs: one remark per function
    with, for one device (a block of each value on a mesh, the whole
    program on a host), the FLOPs its ops declare (CostOpInterface;
    callees included), the peak bytes of the values live at once in
    program order (arguments included), and, for the forward ops and, in
    a reverseMode function, the backward ones (located `adjoint of ...`),
    each kind of collective over each mesh axis with its count and the
    bytes each device sends (`bytesSentPerDevice`, what the runtime
    sends and `m.simulate` counts). It changes nothing. Run it after
    `--kina-propagate-sharding --cse` to see what runs once per value;
    compare two annotations side by side.

    ```
    remark: cost of 'mlp_grad', per device: 3072 FLOPs, 1792 bytes at peak; forward 1 all_reduce over x (128 B); backward 1 all_reduce over x (128 B), 1 all_slice over x (0 B); 256 bytes sent in all
    ```
  }];
}

def MergeShardsPass : Pass<"kina-merge-shards"> {
  let summary = "Fold shards back into whole-tensor ops";
  let description = [{
    The inverse of partitioning, so that a sharded program (written by
    hand, or the host form of an annotated one) can be checked against the
    unsharded program on its IR: run `--inline` first (shards often live
    in helper functions), then this pass, `--canonicalize` and `--cse`.

    - A `concat` of ops of one kind and one set of attributes, along a dim
      their sharding rule computes block by block, becomes that op on the
      concats of its operands (an operand without that dim must be the
      same value in every block): column-parallel matmuls, per-head
      attention, broadcasts, reshapes and transposes of blocks, softmax
      along another axis.
    - `A0 @ B0 + A1 @ B1` becomes `[A0 A1] @ [B0; B1]`: the sum of
      row-parallel partial products is one matmul.
    - A `concat` of a `concat` on the same axis is one `concat`; adjacent
      slices of one value, concatenated, are that value.

    Before:
    ```mlir
    %w0 = kina.slice %w[axis = 1, start = 0, stop = 4] : ...
    %w1 = kina.slice %w[axis = 1, start = 4, stop = 8] : ...
    %z0 = kina.matmul %x, %w0 : ...
    %z1 = kina.matmul %x, %w1 : ...
    %z = kina.concat %z0, %z1[axis = 1] : ...
    ```
    After:
    ```mlir
    %z = kina.matmul %x, %w : ...
    ```
  }];
  let dependentDialects = ["::mlir::kina::KinaDialect"];
}

#endif // KINA_SHARDING_PASSES_TD
