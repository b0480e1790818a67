//===- Passes.td - Kina transformation passes --------------*- tablegen -*-===//
#ifndef KINA_TRANSFORMS_PASSES_TD
#define KINA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssertsToStatusPass : Pass<"kina-asserts-to-status", "::mlir::ModuleOp"> {
  let summary = "Return every cf.assert of a function as an extra i1 result";
  let description = [{
    Each function whose body asserts (`cf.assert`, as the lowering of
    `gather` states "every id is in range"), or calls a function that
    returns a status, returns one more, last `i1` result: the conjunction
    of its asserts and its callees' statuses. The asserts are removed.
    The C wrapper turns `false` into status 1; a shared object never
    aborts its caller. Fails on recursion and on an assert nested in a
    region.

    Before:
    ```mlir
    func.func @f(%ids: tensor<4xi64>) -> tensor<4x4xf32> {
      ...
      cf.assert %ok, "kina.gather: an id is outside [0, rows)"
      return %rows : tensor<4x4xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%ids: tensor<4xi64>) -> (tensor<4x4xf32>, i1) {
      ...
      return %rows, %ok : tensor<4x4xf32>, i1
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

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

def FuseElementwisePass : Pass<"kina-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Chains of elementwise linalg.generic ops as one loop";
  let description = [{
    A producer `linalg.generic` whose loops are all parallel and whose only
    user is another all-parallel generic is fused into it (upstream's
    elementwise fusion, restricted to that case: no reshape propagation,
    no fusion into reductions or matmuls). A bias add, a GELU, the
    arithmetic of a layer norm become one loop each instead of one loop
    and one temporary per op. Every element still takes the same
    operations in the same order: results are bit-identical.

    A producer with several users is fused into the first (which then
    writes its results for the later ones), except that a cheap producer
    (at most 32 ops, at most one input of the full iteration space) whose
    result only all-parallel generics read is first recomputed in each
    later user from its own input: a gradient's adjoints no longer read
    the forward's intermediates from memory (the GELU stored seven tensors
    per layer for the backward; now none).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ApproximateMathPass : Pass<"kina-approximate-math", "::mlir::func::FuncOp"> {
  let summary = "tanh and exp as polynomials the loop vectorizer can widen";
  let description = [{
    Upstream's polynomial approximations of `math.tanh` and `math.exp`
    (no libm call, so a loop of them vectorizes), each wrapped so that a
    NaN operand gives NaN, as libm does. Both are within a few ulp of libm
    (the execution tests compare with NumPy to 2e-6 relative).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def NarrowFloatsPass : Pass<"kina-narrow-floats", "::mlir::func::FuncOp"> {
  let summary = "f16 and bf16 arithmetic in f32, rounded after each op";
  let description = [{
    Every arith op on f16 or bf16 operands computes in f32 between an
    `arith.extf` of its operands and an `arith.truncf` of its float
    result: the same bits as the op in the 16-bit type, since f32 has more
    than twice their precision plus two bits. (Upstream's
    `arith-emulate-unsupported-floats` keeps a chain of such ops in f32
    and rounds only at its end.) Then bf16's conversions become integer
    code (upstream's bf16 expansion: a shift; round to nearest even, NaN
    kept quiet): without AVX512_BF16 LLVM converts through a compiler-rt
    call, and the `.so` links libc and libm only.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileMatmulsPass : Pass<"kina-tile-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg.matmul for the caches and registers, vectorize";
  let description = [{
    For each static `linalg.matmul` on tensors whose N the strip width
    `tile-n` divides: cache tiles (the largest powers of two, times
    `tile-n` for N, that divide the static sizes and are at most `cache-m`,
    `cache-n`, `cache-k`) visited in N, K, M order. Per (N, K) cache tile, B's
    block is packed once, outside the M loop, into strips of K x `tile-n`
    contiguous floats; each strip feeds register tiles of `tile-m` x
    `tile-n` (the rows `tile-m` does not divide form one shorter tile) with
    one step of K, vectorized to `vector.contract` and lowered as outer
    products (FMAs). Matmuls of at most `stream-rows` rows (a decode step)
    skip the packing, which no second register tile would reuse: per N
    cache tile, 8 rows of B at a time are read in place, strip by strip,
    into a `M x tile-n` tile of C. Other matmuls keep their loops.
    A transposed operand is read through the transpose, never copied: when
    B's block is a slice of a `linalg.transpose` of W (dX = dY W^T), its
    strips are packed from W's rows, transposed a block of float lanes at
    a time in registers; when A is a transpose of X (dW = X^T dY), the
    register tile's column of A at each step of K is a run of X's row.
    When X's rows are a multiple of `l1-way-bytes` apart (M of 1024 or
    3072 floats), those runs all fall into one L1 set, so X is first
    copied into rows one cache line longer (A^T B 3072 x 256 x 768: 182
    GFLOP/s, against 234 at M = 3056).
    Run `loop-invariant-subset-hoisting` after it, so that the accumulator
    tile is carried through the K loop in registers. Kina's pipeline sets
    the tile options from the target CPU (`kina::chooseMatmulParameters`);
    the defaults are those it chooses for a Zen 5.

    Matmuls of at least `parallel-threshold` multiply-adds get their
    column panels as an `scf.forall` (independent; see
    `kina-outline-parallel-loops`): N cache tiles, narrowed towards 8
    panels but no narrower than 64 columns, so that a product whose N is
    a single cache tile (256 columns) still runs on several threads. A static
    `linalg.batch_matmul` becomes an `scf.forall` over its batch of
    `linalg.matmul`s first.

    `tuned` entries, `MxKxN:tile-m:cache-m:cache-n:cache-k`, replace those
    four options for the matmuls of that shape (a tuning file's entries,
    `python3 -m kina.tune`).

    With `bf16-dot` (a CPU with AVX512_BF16), a packed matmul of two BF16
    operands widened in `vdpbf16ps`'s pair order (K even) is rebuilt on
    the BF16 values: each operand's pairs along K packed into one i32, a
    product over K/2 pairs tiled as above, whose register tiles are
    `x86vector.avx512.dot` (one per 16 columns and row, per pair of K).
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"8",
           "rows of the register tile (1 to 16)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"32",
           "columns of the register tile (a multiple of the vector width)">,
    Option<"cacheM", "cache-m", "int64_t", /*default=*/"64",
           "largest cache tile of M (rows of A's block in L2)">,
    Option<"cacheN", "cache-n", "int64_t", /*default=*/"256",
           "largest cache tile of N (columns of B's packed block in L2)">,
    Option<"cacheK", "cache-k", "int64_t", /*default=*/"256",
           "largest cache tile of K (rows of a packed strip of B in L1)">,
    Option<"streamRows", "stream-rows", "int64_t", /*default=*/"8",
           "matmuls of at most this many rows read B in place, unpacked">,
    Option<"l1WayBytes", "l1-way-bytes", "int64_t", /*default=*/"4096",
           "bytes of one way of L1: A^T's rows a multiple of it apart are "
           "copied to rows one cache line longer">,
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"4194304",
           "M*N*K from which the N cache tiles become an scf.forall">,
    ListOption<"tuned", "tuned", "std::string",
               "per shape: MxKxN:tile-m:cache-m:cache-n:cache-k">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "BF16 products on vdpbf16ps (the CPU has AVX512_BF16)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::x86vector::X86VectorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::kina::KinaDialect"];
}

def FreeAfterLastUsePass
    : Pass<"kina-free-after-last-use", "::mlir::func::FuncOp"> {
  let summary = "Free each temporary right after its last use";
  let description = [{
    Upstream's ownership-based deallocation frees buffers at the end of the
    block that allocates them, so a long function holds all of its
    temporaries at once. Each `memref.dealloc` of a `memref.alloc` in the
    same block moves to just after the last op of that block that uses the
    buffer or a view of it (`ViewLikeOpInterface`, followed transitively;
    uses nested in regions count as their ancestor op; its address taken
    by `memref.extract_aligned_pointer_as_index` counts as used by the
    calls of the runtime's collectives (`kina_collective_*`) it reaches
    through `arith.index_cast`, which use it during the call only). A buffer one
    of whose views reaches a terminator, an op producing a memref that is
    not a view of it, or whose address goes anywhere but into those calls,
    is left alone.

    ```mlir
    %a = memref.alloc() : memref<64xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<64xf32>)
    linalg.copy ins(%a : memref<64xf32>) outs(%out : memref<64xf32>)
    memref.dealloc %a : memref<64xf32>   // moved here from the block's end
    ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PrefetchPackedRowsPass
    : Pass<"kina-prefetch-packed-rows", "::mlir::func::FuncOp"> {
  let summary = "Prefetch the rows of B that a matmul's packing loop reads next";
  let description = [{
    In each loop `kina-tile-matmuls` marked `kina.pack_rows` (after
    bufferization: it reads B's memref), every vector read of row `r` of B
    is preceded by `memref.prefetch`es of the same columns of row
    `r + distance` (one per cache line). The rows of a block are a page or
    more apart, runs too short for the hardware prefetchers; past the
    block's last row the prefetches reach the next K block's first rows.
    A prefetch never faults, so addresses past B's last row are harmless.
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"8",
           "rows ahead of the read to prefetch">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PrefetchNextBlockPass
    : Pass<"kina-prefetch-next-block", "::mlir::func::FuncOp"> {
  let summary = "Prefetch B's next block from the register loops of a packed matmul";
  let description = [{
    For each loop `kina-tile-matmuls` marked `kina.pack_rows` (after
    bufferization), the register loop that runs most often after it in the
    same block (a loop carrying vectors through `vector.fma`, inside loops
    of constant bounds) is unrolled by a group of steps (a power of two, at
    most 8 and at most the steps per line of the block packed next), and
    each group prefetches one line of that block: run `t` of the register
    loop (of `R` over the block) fetches from line `t * lines / R` on, one
    per group, the block's lines taken a column of lines at a time, so the
    address advances by B's row pitch and the loop carries no multiply or
    division. The next block is the
    next K block of the same columns of B, or after the last one the first
    K block of the next columns (clamped to B). Packing then reads from
    cache while the memory traffic runs under the arithmetic. Left alone:
    a block whose register loops take fewer steps than it has lines, a view
    of B that is not unit-stride subviews of a static matrix, or a matrix
    the blocks do not tile.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DistinctResultsPass
    : Pass<"kina-distinct-results", "::mlir::func::FuncOp"> {
  let summary = "Return each buffer once, before buffer-results-to-out-params";
  let description = [{
    After bufferization, a function may return one buffer as two results
    (the gradients of `a` and `b` in `sum(a + b)` are the same value, and
    CSE merges equal values): MLIR 22's `buffer-results-to-out-params`
    crashes on that (docs/design.md, "Lowering"). Each repeated result is
    returned as a copy of its own instead.

    ```mlir
    return %g, %g : memref<4xf32>, memref<4xf32>
    // becomes
    %c = memref.alloc() : memref<4xf32>
    memref.copy %g, %c : memref<4xf32> to memref<4xf32>
    return %g, %c : memref<4xf32>, memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DonateDestinationsPass
    : Pass<"kina-donate-destinations", "::mlir::ModuleOp"> {
  let summary = "Compute a donated result into its argument (tensors)";
  let description = [{
    For each function result marked `kina.reuses = N` (`@reuses(p)` in
    `.kina`): the `tensor.empty` at the start of its destination chain
    (through linalg ops, `scf.forall` and `scf.for` results to their tied
    inits, and from a collective's `to_tensor` of a `to_buffer` to the
    tensor whose buffer the runtime filled: ZeRO-1's gathered weight)
    becomes argument N, which the lowering marked
    `bufferization.writable`. One-Shot Bufferize then writes the result
    into the argument's buffer when no later read of the argument
    conflicts, and copies the argument otherwise; only the initial value
    of an op's destination changes, which it never read.

    ```mlir
    func.func @step(%w: tensor<8xf32> {bufferization.writable = true}, %g: ...)
        -> (tensor<8xf32> {kina.reuses = 0 : i64}) {
      %e = tensor.empty() : tensor<8xf32>
      %n = linalg.generic ... ins(%w, %g : ...) outs(%e : tensor<8xf32>) ...
      return %n
    // becomes
      %n = linalg.generic ... ins(%w, %g : ...) outs(%w : tensor<8xf32>) ...
    ```
  }];
}

def DropDonatedResultsPass
    : Pass<"kina-drop-donated-results", "::mlir::ModuleOp"> {
  let summary = "Return a donated result in its argument's buffer, not as a result";
  let description = [{
    After bufferization, before `buffer-results-to-out-params`: each
    result marked `kina.reuses = N` is removed from its function, which
    therefore takes no output buffer for it. Where bufferization computed
    it in argument N's buffer there is nothing else to do; otherwise it is
    copied into that buffer at the end (after saving any other returned
    value that still views the argument). A call passes a copy of the
    argument and uses it in place of the result.

    ```mlir
    func.func @step(%w: memref<8xf32>, %g: memref<8xf32>)
        -> (memref<f32>, memref<8xf32> {kina.reuses = 0 : i64}) {
      ...
      return %loss, %w : memref<f32>, memref<8xf32>
    // becomes
    func.func @step(%w: memref<8xf32>, %g: memref<8xf32>) -> memref<f32> {
      ...
      return %loss : memref<f32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def WriteResultsInPlacePass
    : Pass<"kina-write-results-in-place", "::mlir::func::FuncOp"> {
  let summary = "Compute a result returned as a reshape in the caller's out buffer";
  let description = [{
    After `buffer-results-to-out-params`: a `memref.copy` into an out
    argument (a block argument used by nothing else) from expand/collapse
    reshapes of a static, identity-layout `memref.alloc` of the same block,
    which nothing uses after the copy, is removed: the allocation becomes
    the out argument reshaped back to its shape, so the result is computed
    where the caller wants it. Upstream hoists only a returned allocation
    itself; a 1 x 128 x 32000 result computed as a 128 x 32000 matmul was
    copied (16 MB) on every call.

    ```mlir
    %a = memref.alloc() : memref<128x32000xf32>
    ... writes %a ...
    %e = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 128, 32000]
    memref.copy %e, %out
    // becomes
    %a = memref.collapse_shape %out [[0, 1], [2]]
    ... writes %a ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ZeroFirstKBlockPass
    : Pass<"kina-zero-first-k-block", "::mlir::func::FuncOp"> {
  let summary = "Start a tiled matmul's first K block from the fill value, not the filled result";
  let description = [{
    For each `linalg.fill` of a static buffer whose next op that touches the
    buffer is an `scf.for`, in which the buffer is only updated tile by
    tile: a vector read of a whole subview of it, then (next in the same
    block) a vector write of the same subview, the subviews of unit strides
    and of offsets that are constants or induction variables of the
    constant-bound `scf.for`s around the update. Then, counting the tiles
    over those loops' iterations:

    - when the loop's iterations together update every element exactly
      once (a matmul whose K is one block, such as a weight gradient over
      a batch's rows: the M tiles' loop), every read becomes a broadcast
      of the fill value;
    - else when each iteration does, the loop's induction variable in no
      offset (the K blocks of a tiled matmul: each writes all of its C
      tiles), each read becomes `scf.if` (first iteration) a broadcast of
      the fill value, else the read;

    and the fill is erased: nothing reads what it wrote. Other fills stay.
    The conditions are checked on the IR, whichever passes made it (a
    read left inside the register loop, a loop that skips a tile, a
    second update of a tile keep the fill). For `lm_head`'s 128 x 32000
    logits the fill is a pass of stores over 16 MB of cold memory; the
    110M GPT's training step: 0.93 -> 0.88 s on one thread.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def SplitParallelOpsPass : Pass<"kina-split-parallel-ops", "::mlir::func::FuncOp"> {
  let summary = "Large linalg ops on tensors as an scf.forall of pieces";
  let description = [{
    Each static linalg op on tensors outside any loop (other than
    `linalg.fill`), with at least `min-iterations` points in its iteration
    space, is tiled along its outermost parallel dimension of more than one
    iteration into about `pieces` tiles of an `scf.forall`, which
    `kina-outline-parallel-loops` hands to the thread pool. Reduction
    dimensions are never split, so the results are the same bits.
    Run after `kina-tile-matmuls` (whose matmuls are inside loops by then).
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"65536",
           "the smallest iteration space worth waking threads for">,
    Option<"pieces", "pieces", "int64_t", /*default=*/"8",
           "about how many tiles to split into">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TileTransposesPass : Pass<"kina-tile-transposes", "::mlir::func::FuncOp"> {
  let summary = "Transposes that move the last dim, by 32 x 32 blocks";
  let description = [{
    Each static `linalg.transpose` on tensors whose output's last dim is
    not the input's last dim, larger than one block, is tiled into an
    `scf.for` nest of blocks of 32 along the output's last dim and the
    output dim that reads the input's last dim (1 along the others), so
    that a block's input rows stay in L1 and the TLB. Run after
    `kina-split-parallel-ops` (the pieces of a split transpose are tiled).

    With `register-side` (the CPU's float lanes: 8 or 16), a block of
    32-bit elements whose sides that divides is transposed in registers:
    `register-side` rows of the input read whole, a `vector.transpose`
    lowered to shuffles (AVX2's 8 x 8, AVX-512's 16 x 16), the rows of the
    output written whole; no element gathers.
  }];
  let options = [
    Option<"registerSide", "register-side", "int64_t", /*default=*/"0",
           "the side of the blocks transposed in registers: 8 or 16 "
           "(the CPU's float lanes), 0 for none">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           // x86vector's 8 x 8 lowering blends by inline asm
                           "::mlir::LLVM::LLVMDialect"];
}

def OutlineParallelLoopsPass
    : Pass<"kina-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Outline bufferized scf.forall bodies for the thread pool";
  let description = [{
    Each outermost `scf.forall` on memrefs with static bounds becomes a
    private function over a range of its (linearized) iterations, marked
    `kina.parallel_body`, and a call of it over all iterations:

    ```mlir
    scf.forall (%j) = (0) to (512) step (256) { ... uses %a, %c ... }
    ```
    becomes
    ```mlir
    call @f_parallel(%c0, %c2, %a, %c) : (index, index, memref<...>, ...) -> ()
    func.func private @f_parallel(%begin: index, %end: index, ...)
        attributes {kina.parallel_body} {
      scf.for %t = %begin to %end step %c1 { %j = %t * 256; ... }
    }
    ```
    Captured memrefs that are not static and dense are passed as their base
    buffer, offset, sizes and strides, so the bare-pointer calling
    convention can pass them. `kina-lower-parallel-calls` turns the calls
    into launches once everything is in the LLVM dialect.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::kina::KinaDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def MergeParallelBodiesPass
    : Pass<"kina-merge-parallel-bodies", "::mlir::ModuleOp"> {
  let summary = "One function for identical kina.parallel_body functions";
  let description = [{
    The repeated blocks of a model outline identical loop bodies, but for
    their names (one per op of every block). Bodies of the same type whose
    regions are equivalent (locations aside) are merged into the first:
    its calls replace theirs, and they are erased. Everything after
    outlining, LLVM's optimizer and code generator included, then sees one
    copy.
  }];
}

def LowerParallelCallsPass
    : Pass<"kina-lower-parallel-calls", "::mlir::ModuleOp"> {
  let summary = "Calls of kina.parallel_body functions as thread-pool launches";
  let description = [{
    On the LLVM dialect. For each `llvm.func @F(i64 begin, i64 end, T...)`
    marked `kina.parallel_body`, adds `@F_task(ptr ctx, i64 begin, i64 end)`
    that loads the `T...` from a struct at `ctx` and calls `@F`; each call
    `@F(0, n, args...)` becomes: store `args` in a stack struct, call
    `kina_parallel_for(@F_task, ctx, n)` (lib/Runtime/ParallelFor.c).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::kina::KinaDialect"];
}

#endif // KINA_TRANSFORMS_PASSES_TD
