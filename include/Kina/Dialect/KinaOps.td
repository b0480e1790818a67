//===- KinaOps.td - The kina ops ----------------------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINAOPS_TD
#define KINA_DIALECT_KINAOPS_TD

include "Kina/Dialect/KinaDialect.td"
include "Kina/Dialect/KinaTypes.td"
include "Kina/Dialect/KinaInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every kina op is pure, has one result, infers it with its shape rule
// (lib/Dialect/ShapeRules.cpp), says how it differentiates
// (lib/Dialect/AdjointRules.cpp) and what it costs (one operation per
// result element unless it says otherwise: lib/Dialect/CostRules.cpp). How ops are written in `.kina` source is
// the frontend's business: include/Kina/Syntax/SurfaceSyntax.td.
class Kina_Op<string mnemonic, list<Trait> traits = [],
              list<string> interfaceMethods = [],
              list<string> costMethods = []>
    : Op<Kina_Dialect, mnemonic,
         !listconcat(traits, [Pure, DeclareOpInterfaceMethods<
             Kina_InferResultTypeOpInterface, interfaceMethods>,
             DeclareOpInterfaceMethods<Kina_AdjointOpInterface>,
             DeclareOpInterfaceMethods<Kina_CostOpInterface,
                                       costMethods>])> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::kina::verifyInferredResultType(*this);
    }
  }];
}

// The result's placement is the op's to choose, not its operands'.
def Kina_ResultPlacementIsFree : NativeOpTrait<"ResultPlacementIsFree"> {
  let cppNamespace = "::mlir::kina";
}

// The result only repeats or moves its operand's elements (or is a
// constant): a split reverseMode recomputes it in the backward from the
// parameters instead of saving it, which would write a copy (a weight
// broadcast over the batch) the backward need not read from memory.
def Kina_RecomputedNotSaved : NativeOpTrait<"RecomputedNotSaved"> {
  let cppNamespace = "::mlir::kina";
}

// Every operand has the result's shape and placement, and each result
// element depends only on the operands' elements at its own index. Its
// sharding rule splits every dim alike (lib/Sharding/ShardingRules.cpp),
// and in source any operand may be a contextual `broadcast(x)`.
def Kina_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::mlir::kina";
}

//===----------------------------------------------------------------------===//
// The mesh
//===----------------------------------------------------------------------===//

def Kina_MeshOp : Op<Kina_Dialect, "mesh",
                     [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "the devices a program runs on";
  let description = [{
    A module declares at most one mesh, named `@mesh`: a grid of devices
    with one named axis per dimension, numbered row-major. Mesh placements
    (`@replicated`, `@sharded(...)`) refer to its axes by name, and their
    split dims must divide by the axis sizes. A mesh has 1 to 64 devices.
    `@mesh([4])` in source declares one axis named `x`.

    ```mlir
    kina.mesh @mesh [heads = 2, vocab = 2]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$shape,
                       StrArrayAttr:$axes);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The size of mesh axis `name`, if the mesh has it.
    std::optional<int64_t> getAxisSize(::llvm::StringRef name);
    /// How far apart in the row-major device numbering two devices are
    /// that differ by one on axis `name`: the product of the sizes of the
    /// axes after it.
    std::optional<int64_t> getAxisStride(::llvm::StringRef name);
    int64_t getNumDevices();
    /// `heads, vocab`, for diagnostics.
    std::string getAxisList();
    /// The mesh of the module around `from`, or null.
    static MeshOp lookup(::mlir::Operation *from);
    /// The rules of a mesh's shape and axis names, for the verifier and
    /// the frontend alike.
    static ::llvm::LogicalResult
    verifyAxes(::llvm::ArrayRef<int64_t> shape,
               ::llvm::ArrayRef<::llvm::StringRef> names,
               ::mlir::kina::EmitErrorFn emitError);
  }];
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

def Kina_PipelineOp : Op<Kina_Dialect, "pipeline",
                         [Symbol, HasParent<"::mlir::ModuleOp">,
                          DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a training step as pipeline stages";
  let description = [{
    A training step whose stages are functions of the module, in order
    (`fn step = pipeline(f0, f1, ..., batch=[...])` in source): stage
    k > 0 takes stage k-1's result as its first parameter, the last
    returns the microbatch's rank-0 float loss. The parameters named in
    `batch` are cut into microbatches, those in `constants` are given
    whole to every stage and get no gradient, those in `shared` are
    weights several stages read (a tied embedding); every other parameter
    is its stage's weight. The schedule and the microbatch count are the
    runtime's (`kina.pipelining`); the op is a declaration, erased with
    the mesh before the lowering.

    ```mlir
    kina.pipeline @step stages [@embed, @head] batch ["ids", "y"]
        constants [] shared []
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefArrayAttr:$stages, StrArrayAttr:$batch,
                       StrArrayAttr:$constants, StrArrayAttr:$shared);
  let assemblyFormat = [{
    $sym_name `stages` $stages `batch` $batch `constants` $constants
    `shared` $shared attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

// A float of any of the language's widths; its type is the constant's
// element type.
def Kina_FloatAttr : Attr<CPred<"::llvm::isa<::mlir::FloatAttr>($_self)">,
                           "float attribute"> {
  let storageType = [{ ::mlir::FloatAttr }];
  let returnType = [{ ::llvm::APFloat }];
  let convertFromStorage = [{ $_self.getValue() }];
}

def Kina_ConstantOp : Kina_Op<"constant", [ConstantLike,
                                           Kina_ResultPlacementIsFree,
                                           Kina_RecomputedNotSaved],
                               [], ["flops"]> {
  let summary = "rank-0 float constant";
  let description = [{
    A floating-point literal of the source, of the value's element type
    (f32, f64, f16 or bf16). Combine it with a tensor through
    `kina.broadcast`. Its placement is `@host`, or `@replicated` inside a
    mesh-placed function.

    ```mlir
    %half = kina.constant 5.000000e-01 : !kina.tensor<f32, @host>
    ```
  }];
  let arguments = (ins Kina_FloatAttr:$value);
  let results = (outs Kina_Tensor:$result);
  // The value's type is the result's element type, written once.
  let hasCustomAssemblyFormat = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kina_SliceOp : Kina_Op<"slice", [], [], ["flops"]> {
  let summary = "contiguous range [start, stop) of one axis";
  let description = [{
    Keeps indices `start <= i < stop` of dimension `axis`; every other
    dimension is kept whole. Requires `0 <= axis < rank` and
    `0 <= start < stop <= dim(axis)`.

    ```mlir
    %lm0 = kina.slice %lm_head [axis = 1, start = 0, stop = 4]
        : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$stop);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `,` `start` `=` $start `,` `stop` `=` $stop `]`
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Kina_ConcatOp : Kina_Op<"concat", [], [], ["flops"]> {
  let summary = "joins tensors along one axis";
  let description = [{
    All operands have the same rank, element type and placement and agree
    on every dimension but `axis`; the result's `axis` is their sum. In the
    tensor-parallel programs this is the all-gather of the shards.

    ```mlir
    %logits = kina.concat %z0, %z1 [axis = 2]
        : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x4xf32, @host>)
        -> !kina.tensor<1x4x8xf32, @host>
    ```
  }];
  let arguments = (ins Variadic<Kina_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $inputs `[` `axis` `=` $axis `]` attr-dict `:` functional-type($inputs, $result)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kina_GatherOp : Kina_Op<"gather", [], [], ["flops"]> {
  let summary = "rows of a table selected by integer ids";
  let description = [{
    `result[i..., j...] = table[ids[i...], j...]`, so the result shape is
    `shape(ids) ++ shape(table)[1:]`. `table` is f32 of rank >= 1, `ids`
    is i32 or i64 of any rank. An id outside `[0, dim0)` is a run-time
    error reported to the caller; nothing is read out of bounds.

    ```mlir
    %x = kina.gather %embed [%token_ids]
        : (!kina.tensor<8x4xf32, @host>, !kina.tensor<1x4xi64, @host>)
        -> !kina.tensor<1x4x4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$table, Kina_Tensor:$ids);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type(operands, $result)
  }];
}

def Kina_ScatterAddOp : Kina_Op<"scatter_add", [], [], ["flops"]> {
  let summary = "rows added into a zero table at integer ids (gather's adjoint)";
  let description = [{
    `result[r, j...] = sum of updates[i..., j...] over every i... with
    ids[i...] == r`: a table of `rows` rows, zero where no id points, where
    repeated ids add. `updates` is f32 whose leading dims are the shape of
    `ids` (i32 or i64); the result shape is `[rows] ++ shape(updates)[rank(ids):]`.
    It is the transpose of `kina.gather`, which is its adjoint, and it costs
    one add per element of `updates` (not the `rows`-wide product of a
    one-hot matrix). An id outside `[0, rows)` is a run-time error reported
    to the caller; nothing is written out of bounds.

    ```mlir
    %g = kina.scatter_add %d [%token_ids] [rows = 8]
        : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4xi64, @host>)
        -> !kina.tensor<8x4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$updates, Kina_Tensor:$ids, I64Attr:$rows);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $updates `[` $ids `]` `[` `rows` `=` $rows `]` attr-dict `:`
    functional-type(operands, $result)
  }];
}

def Kina_BroadcastOp : Kina_Op<"broadcast", [Kina_NamesShapeOpInterface,
                                             Kina_RecomputedNotSaved], [],
                               ["flops"]> {
  let summary = "NumPy-style broadcast to an explicit shape";
  let description = [{
    Dimensions are aligned from the right; each source dimension is 1 or
    equal to the target's, and the target may add leading dimensions.

    ```mlir
    %w = kina.broadcast %wq to [1, 4, 4]
        : !kina.tensor<4x4xf32, @host> -> !kina.tensor<1x4x4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `to` $shape attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Kina_ReshapeOp : Kina_Op<"reshape", [Kina_NamesShapeOpInterface,
                                         Kina_RecomputedNotSaved], [],
                             ["flops"]> {
  let summary = "same elements in row-major order, another shape";
  let description = [{
    ```mlir
    %q = kina.reshape %q_flat to [1, 4, 2, 2]
        : !kina.tensor<1x4x4xf32, @host> -> !kina.tensor<1x4x2x2xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `to` $shape attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Kina_TransposeOp : Kina_Op<"transpose", [Kina_RecomputedNotSaved], [],
                               ["flops"]> {
  let summary = "permutes the dimensions";
  let description = [{
    `result.shape[i] = input.shape[perm[i]]`; `perm` is a permutation of
    `0 .. rank-1`.

    ```mlir
    %t = kina.transpose %q perm [0, 2, 1, 3]
        : !kina.tensor<1x4x2x2xf32, @host> -> !kina.tensor<1x2x4x2xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `perm` $perm attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Kina_MatmulOp : Kina_Op<"matmul", [], ["contextualBroadcastShape"],
                             ["flops"]> {
  let summary = "batched matrix product [..., M, K] @ [..., K, N]";
  let description = [{
    Both operands are f32 of the same rank >= 2 with equal leading (batch)
    dimensions; the result is `[..., M, N]`.

    ```mlir
    %z = kina.matmul %residual, %w
        : (!kina.tensor<1x4x4xf32, @host>, !kina.tensor<1x4x8xf32, @host>)
        -> !kina.tensor<1x4x8xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$lhs, Kina_Tensor:$rhs);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, $result)
  }];
}

def Kina_SoftmaxOp : Kina_Op<"softmax", [], [], ["flops"]> {
  let summary = "numerically stable softmax along one axis";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`; f32, same shape.
    One type is written when operand and result have the same
    (`: T`), both otherwise (`: (T) -> U`, placements before propagation).

    ```mlir
    %p = kina.softmax %scores [axis = 3] : !kina.tensor<1x2x4x4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `]` attr-dict `:`
    custom<SameOrFunctionalType>(type($input), type($result))
  }];
}

def Kina_LogSoftmaxOp : Kina_Op<"log_softmax", [], [], ["flops"]> {
  let summary = "numerically stable log of the softmax along one axis";
  let description = [{
    `x - max(x) - log(sum(exp(x - max(x))))` along `axis`; f32, same shape.

    ```mlir
    %l = kina.log_softmax %logits [axis = 2] : !kina.tensor<1x4x8xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `]` attr-dict `:`
    custom<SameOrFunctionalType>(type($input), type($result))
  }];
}

def Kina_OneHotOp : Kina_Op<"one_hot"> {
  let summary = "ids as rows of 1.0 at the id, 0.0 elsewhere";
  let description = [{
    Integer ids (i32 or i64) of any shape to an f32 tensor of their shape
    with one more dim of `classes`: 1.0 where the last index equals the id,
    0.0 elsewhere (an id outside `[0, classes)` gives a row of zeros). No
    gradient flows to the ids.

    ```mlir
    %h = kina.one_hot %ids [classes = 8] : (!kina.tensor<1x4xi64, @host>) -> !kina.tensor<1x4x8xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$ids, I64Attr:$classes);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $ids `[` `classes` `=` $classes `]` attr-dict `:`
    functional-type($ids, $result)
  }];
}

class Kina_ElementwiseBinaryOp<string mnemonic, string what>
    : Kina_Op<mnemonic, [Kina_Elementwise]> {
  let summary = "elementwise " # what # " of two tensors of one type";
  let description = "Both operands have the same shape, element type and "
    "placement; nothing is broadcast implicitly.\n\n```mlir\n%r = kina."
    # mnemonic # " %a, %b : !kina.tensor<1x4x4xf32, @host>\n```";
  let arguments = (ins Kina_Tensor:$lhs, Kina_Tensor:$rhs);
  let results = (outs Kina_Tensor:$result);
  // `%a, %b : T` names the one type once; operands of different types can
  // only be written in the generic form, where the verifier reports them.
  let hasCustomAssemblyFormat = 1;
}

def Kina_AddOp : Kina_ElementwiseBinaryOp<"add", "sum">;
def Kina_SubOp : Kina_ElementwiseBinaryOp<"sub", "difference">;
def Kina_MulOp : Kina_ElementwiseBinaryOp<"mul", "product">;
def Kina_DivOp : Kina_ElementwiseBinaryOp<"div", "quotient">;
// The larger (smaller) of each pair (f32; NaN propagates). The cotangent
// goes to the larger (smaller) operand, halved between equal ones, as
// PyTorch's.
def Kina_MaximumOp : Kina_ElementwiseBinaryOp<"maximum", "maximum">;
def Kina_MinimumOp : Kina_ElementwiseBinaryOp<"minimum", "minimum">;

// Comparisons of f32 operands as masks: 1.0 where the comparison holds,
// else 0.0. They are ordered, as IEEE and NumPy compare: NaN compares
// false with everything. A mask is constant almost everywhere, so no
// gradient flows through one.
def Kina_EqualOp : Kina_ElementwiseBinaryOp<"equal", "`==` mask">;
def Kina_LessOp : Kina_ElementwiseBinaryOp<"less", "`<` mask">;
def Kina_LessEqualOp : Kina_ElementwiseBinaryOp<"less_equal", "`<=` mask">;
def Kina_GreaterOp : Kina_ElementwiseBinaryOp<"greater", "`>` mask">;
def Kina_GreaterEqualOp
    : Kina_ElementwiseBinaryOp<"greater_equal", "`>=` mask">;

def Kina_SelectOp : Kina_Op<"select", [Kina_Elementwise]> {
  let summary = "elementwise choice between two tensors by a mask";
  let description = [{
    `on_true` where `mask` is not 0.0, `on_false` where it is (a NaN mask
    element chooses `on_true`, as NumPy's `where` does). All three are f32
    of one shape and placement. Only the chosen operand's element is read
    into the result, so an inf or NaN in the other does not leak (as it
    would through `m * a + (1 - m) * b`). The cotangent goes to the chosen
    operand; the mask gets none. Source writes it `where(mask, a, b)`.

    ```mlir
    %r = kina.select %mask, %a, %b : !kina.tensor<4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$mask, Kina_Tensor:$on_true,
                       Kina_Tensor:$on_false);
  let results = (outs Kina_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
}

def Kina_NegOp : Kina_Op<"neg", [Kina_Elementwise]> {
  let summary = "elementwise negation";
  let description = [{
    The unary `-` of the source; flips the sign bit of floats.

    ```mlir
    %n = kina.neg %x : !kina.tensor<4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input);
  let results = (outs Kina_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
}

// Reductions over one axis, which the result keeps with size 1 (so that
// `x - broadcast(mean(x, axis=2))` lines up), f32.
class Kina_AxisReductionOp<string mnemonic, string what>
    : Kina_Op<mnemonic, [], [], ["flops"]> {
  let summary = what # " along one axis, keeping it with size 1";
  let description = what # " of the elements along `axis`; f32. The result "
    "has the operand's shape with `axis` of size 1. NaN propagates, as in "
    "NumPy.\n\n```mlir\n%r = kina." # mnemonic # " %x [axis = 2] : "
    "(!kina.tensor<1x4x8xf32, @host>) -> !kina.tensor<1x4x1xf32, @host>\n```";
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `]` attr-dict `:`
    custom<SameOrFunctionalType>(type($input), type($result))
  }];
  let hasFolder = 1;
}

def Kina_SumOp : Kina_AxisReductionOp<"sum", "the sum">;
def Kina_MeanOp : Kina_AxisReductionOp<"mean", "the mean">;
def Kina_MaxOp : Kina_AxisReductionOp<"max", "the largest element">;

// Elementwise math on f32, same shape: enough for layer norm and GELU.
class Kina_UnaryMathOp<string mnemonic, string what,
                       string rule = "as C's libm computes it for float">
    : Kina_Op<mnemonic, [Kina_Elementwise]> {
  let summary = "elementwise " # what # " (f32)";
  let description = "The " # what # " of every element, " # rule #
    " (NaN in, NaN out).\n\n```mlir\n%r = kina." # mnemonic #
    " %x : !kina.tensor<4xf32, @host>\n```";
  let arguments = (ins Kina_Tensor:$input);
  let results = (outs Kina_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
}

def Kina_ExpOp : Kina_UnaryMathOp<"exp", "exponential">;
def Kina_LogOp : Kina_UnaryMathOp<"log", "natural logarithm">;
def Kina_SqrtOp : Kina_UnaryMathOp<"sqrt", "square root">;
def Kina_RsqrtOp : Kina_UnaryMathOp<"rsqrt", "reciprocal square root">;
def Kina_TanhOp : Kina_UnaryMathOp<"tanh", "hyperbolic tangent">;
def Kina_AbsOp : Kina_UnaryMathOp<"abs", "absolute value",
    "with the sign bit cleared; its derivative is the sign, 0 at 0 (PyTorch's)">;
def Kina_ReluOp : Kina_UnaryMathOp<"relu", "rectified linear unit",
    "`max(x, 0)`; its derivative is 1 above 0 and 0 elsewhere, 0 at 0 "
    "included (PyTorch's)">;

def Kina_CastOp : Kina_Op<"cast", [Kina_Elementwise]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Every element converted to the float type `to` (f32, f64, f16, bf16)
    and rounded to nearest even: the float operand's value, or an integer
    operand's. Casts between floats are exact when widening and round
    once when narrowing (f64 to f16 or bf16 too: through f32 rounded to
    odd, which rounds as one step would). Overflow gives inf and NaN stays
    NaN, as IEEE says. The cotangent of a float operand is the result's
    cotangent cast back; an integer operand gets none.

    ```mlir
    %h = kina.cast %x to bf16 : !kina.tensor<4xf32, @host> -> !kina.tensor<4xbf16, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, TypeAttr:$to);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `to` $to attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reverse mode
//===----------------------------------------------------------------------===//

def Kina_ReverseModeOp : Op<Kina_Dialect, "reverse_mode",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the value and the gradients of a function (reverseMode)";
  let description = [{
    What the frontend emits for `fn G = reverseMode(F, wrt=[...])`: the
    body of `G`. Its operands are `F`'s parameters, then the cotangent seed
    of `F`'s result when that is not rank 0; its results are `F`'s result,
    then the gradient of each parameter `wrt` names (by position), each of
    that parameter's type. `--kina-differentiate` replaces it by the
    forward and adjoint computation.

    ```mlir
    %v, %d = kina.reverse_mode @loss(%x, %w) wrt = [1] : (!kina.tensor<4xf32, @host>, !kina.tensor<4xf32, @host>) -> (!kina.tensor<f32, @host>, !kina.tensor<4xf32, @host>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, DenseI64ArrayAttr:$wrt,
                   Variadic<Kina_Tensor>:$inputs);
  let results = (outs Variadic<Kina_Tensor>:$results);
  let assemblyFormat = [{
    $callee `(` $inputs `)` `wrt` `=` $wrt attr-dict `:`
    functional-type($inputs, $results)
  }];
}

//===----------------------------------------------------------------------===//
// Placement changes and collectives
//===----------------------------------------------------------------------===//

def Kina_ReshardOp : Kina_Op<"reshard", [Kina_ResultPlacementIsFree], [],
                             ["flops"]> {
  let summary = "the same global tensor, placed otherwise";
  let description = [{
    Converts between placements of one global tensor: `@host` to a mesh
    placement (a distribution), one mesh placement to another, or a mesh
    placement to `@host`. The frontend puts one where a call or a return
    needs another placement than the value has; propagation and
    partitioning realize it with collectives.

    ```mlir
    %w = kina.reshard %lm_head
        : !kina.tensor<4x8xf32, @host> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

// Every collective names the mesh axis `over` whose devices take part: the
// devices that differ only in their coordinate on it. In the global view
// (mesh placements, global shapes) a collective changes only the
// placement; in the per-device view (`@local`, local shapes) it changes
// the shape by the axis size.
class Kina_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Kina_Op<mnemonic, !listconcat(traits, [Kina_CollectiveOpInterface]), [],
              ["flops"]> {
  let results = (outs Kina_Tensor:$result);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kina_AllGatherOp : Kina_CollectiveOp<"all_gather"> {
  let summary = "every device gets the whole of an axis cut over the mesh";
  let description = [{
    The blocks of `axis`, cut over mesh axis `over`, are concatenated in
    device order on every device. Global view: `@sharded(axis=A, over=M)`
    to the same placement without that split. Per-device view: `axis`
    grows by the size of `over`.

    ```mlir
    %l = kina.all_gather %z [axis = 2, over = "x"]
        : !kina.tensor<1x4x8xf32, @sharded(axis=2)> -> !kina.tensor<1x4x8xf32, @replicated>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis, StrAttr:$over);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `,` `over` `=` $over `]` attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Kina_AllSliceOp : Kina_CollectiveOp<"all_slice"> {
  let summary = "each device keeps its block of an axis (no communication)";
  let description = [{
    The inverse of `all_gather`: each device keeps block `i` of `axis`,
    `i` its coordinate on mesh axis `over`. Global view: adds the split
    `axis` over `over`. Per-device view: `axis` shrinks by the size of
    `over`, which must divide it.

    ```mlir
    %w0 = kina.all_slice %w [axis = 1, over = "x"]
        : !kina.tensor<4x8xf32, @replicated> -> !kina.tensor<4x8xf32, @sharded(axis=1)>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis, StrAttr:$over);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `,` `over` `=` $over `]` attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Kina_AllReduceOp : Kina_CollectiveOp<"all_reduce"> {
  let summary = "every device gets the sum (or max) of the devices' values";
  let description = [{
    Combines the values of the devices along mesh axis `over` elementwise;
    every device gets identical bits. Global view: `sum` of a value partial
    over `over` to the same placement without it. Per-device view: the
    same shape; `max` exists here only (a softmax over a split axis).

    ```mlir
    %r = kina.all_reduce %p [kind = sum, over = "x"]
        : !kina.tensor<1x4x4xf32, @partial> -> !kina.tensor<1x4x4xf32, @replicated>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, Kina_ReductionKindAttr:$kind,
                       StrAttr:$over);
  let assemblyFormat = [{
    $input `[` `kind` `=` custom<ReductionKind>($kind) `,` `over` `=` $over `]`
    attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Kina_ReduceScatterOp : Kina_CollectiveOp<"reduce_scatter"> {
  let summary = "sum over the mesh axis, each device keeping its block";
  let description = [{
    An `all_reduce` (sum) whose result each device keeps only block `i`
    of, on `axis`. Global view: partial over `over` to split `axis` over
    `over`. Per-device view: `axis` shrinks by the size of `over`.

    ```mlir
    %s = kina.reduce_scatter %p [axis = 2, over = "x"]
        : !kina.tensor<1x4x4xf32, @partial> -> !kina.tensor<1x4x4xf32, @sharded(axis=2)>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis, StrAttr:$over);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `,` `over` `=` $over `]` attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Kina_AllToAllOp : Kina_CollectiveOp<"all_to_all"> {
  let summary = "moves the split of a tensor from one axis to another";
  let description = [{
    Global view: `@sharded(axis=from, over=M)` to `@sharded(axis=to,
    over=M)`. Per-device view: `from` grows and `to` shrinks by the size
    of `over`.

    ```mlir
    %t = kina.all_to_all %x [from = 1, to = 2, over = "x"]
        : !kina.tensor<1x4x8xf32, @sharded(axis=1)> -> !kina.tensor<1x4x8xf32, @sharded(axis=2)>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$from, I64Attr:$to,
                       StrAttr:$over);
  let assemblyFormat = [{
    $input `[` `from` `=` $from `,` `to` `=` $to `,` `over` `=` $over `]`
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Kina_PermuteOp : Kina_CollectiveOp<"permute"> {
  let summary = "each device's block to the device `shift` places along the mesh axis";
  let description = [{
    Point to point along mesh axis `over`: the device at coordinate `c`
    sends its value to the one at `c + shift` and gets the value of the
    one at `c - shift` (`jax.lax.ppermute` with the pairs of one shift).
    Without `cyclic`, a device whose source is off the axis gets zeros
    and one whose target is off the axis sends nothing (a pipeline's
    first stage receives nothing, its last sends nothing); with it,
    coordinates wrap around (a ring). `0 < |shift| <` the axis size. The
    per-device view only: the value's shape and type are unchanged.

    ```mlir
    %next = kina.permute %act [shift = 1, over = "pp"]
        : !kina.tensor<4x8xf32, @local> -> !kina.tensor<4x8xf32, @local>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$shift, StrAttr:$over,
                       UnitAttr:$cyclic);
  let assemblyFormat = [{
    $input `[` `shift` `=` $shift `,` `over` `=` $over (`,` `cyclic` $cyclic^)?
    `]` attr-dict `:` type($input) `->` type($result)
  }];
}

#endif // KINA_DIALECT_KINAOPS_TD
