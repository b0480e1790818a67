//===- KinaOps.td - The kina ops ----------------------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINAOPS_TD
#define KINA_DIALECT_KINAOPS_TD

include "Kina/Dialect/KinaDialect.td"
include "Kina/Dialect/KinaTypes.td"
include "Kina/Dialect/KinaInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every kina op is pure, has one result and infers it with its shape rule
// (lib/Dialect/ShapeRules.cpp). How ops are written in `.kina` source is
// the frontend's business: include/Kina/Frontend/SurfaceSyntax.td.
class Kina_Op<string mnemonic, list<Trait> traits = [],
              list<string> interfaceMethods = []>
    : Op<Kina_Dialect, mnemonic,
         !listconcat(traits, [Pure, DeclareOpInterfaceMethods<
             Kina_InferResultTypeOpInterface, interfaceMethods>])> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::kina::verifyInferredResultType(*this);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kina_ConstantOp : Kina_Op<"constant", [ConstantLike]> {
  let summary = "rank-0 f32 constant";
  let description = [{
    A floating-point literal of the source. Combine it with a tensor through
    `kina.broadcast`.

    ```mlir
    %half = kina.constant 5.000000e-01 : !kina.tensor<f32, @host>
    ```
  }];
  let arguments = (ins F32Attr:$value);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kina_SliceOp : Kina_Op<"slice"> {
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

def Kina_ConcatOp : Kina_Op<"concat"> {
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

def Kina_GatherOp : Kina_Op<"gather"> {
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

def Kina_BroadcastOp : Kina_Op<"broadcast"> {
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

def Kina_ReshapeOp : Kina_Op<"reshape"> {
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

def Kina_TransposeOp : Kina_Op<"transpose"> {
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

def Kina_MatmulOp : Kina_Op<"matmul", [], ["contextualBroadcastShape"]> {
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

def Kina_SoftmaxOp : Kina_Op<"softmax", [AllTypesMatch<["input", "result"]>]> {
  let summary = "numerically stable softmax along one axis";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`; f32, same shape.

    ```mlir
    %p = kina.softmax %scores [axis = 3] : !kina.tensor<1x2x4x4xf32, @host>
    ```
  }];
  let arguments = (ins Kina_Tensor:$input, I64Attr:$axis);
  let results = (outs Kina_Tensor:$result);
  let assemblyFormat = [{
    $input `[` `axis` `=` $axis `]` attr-dict `:` type($input)
  }];
}

class Kina_ElementwiseBinaryOp<string mnemonic, string what>
    : Kina_Op<mnemonic> {
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

def Kina_NegOp : Kina_Op<"neg"> {
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

#endif // KINA_DIALECT_KINAOPS_TD
