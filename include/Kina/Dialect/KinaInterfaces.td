//===- KinaInterfaces.td - Shape inference interface -------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINAINTERFACES_TD
#define KINA_DIALECT_KINAINTERFACES_TD

include "mlir/IR/OpBase.td"

// The single home of every kina shape rule. The verifier checks the result
// type against it, `createInferred` builds ops with it and the frontend
// asks it for result types, so a rule is never written twice.
//
// Upstream's InferTypeOpInterface would also give inferring builders, but
// its verifier adds a second, generic "failed to infer returned types"
// error to every shape error; see docs/design.md.
def Kina_InferResultTypeOpInterface : OpInterface<"InferResultTypeOpInterface"> {
  let cppNamespace = "::mlir::kina";
  let description = [{
    Computes an op's result type from its operand types, its inherent
    attributes and the module's mesh (null when there is none), or reports
    why the op is ill-typed through `emitError`.
  }];
  let methods = [
    StaticInterfaceMethod<
      "Infers the result type, or emits a diagnostic and fails.",
      "::mlir::FailureOr<::mlir::Type>", "inferResultType",
      (ins "::mlir::TypeRange":$operandTypes,
           "::mlir::DictionaryAttr":$attributes,
           "::mlir::Operation *":$mesh,
           "::mlir::kina::EmitErrorFn":$emitError)>,
    StaticInterfaceMethod<[{
        The shape a `broadcast` operand takes when it is written without
        a target (`broadcast(x)`) as an operand of this op, from `input`
        (x's type) and `other` (the other operand's type). By default the
        other operand's shape: elementwise ops combine equal shapes.
      }],
      "::mlir::FailureOr<::llvm::SmallVector<int64_t>>",
      "contextualBroadcastShape",
      (ins "::mlir::kina::KinaTensorType":$input,
           "::mlir::kina::KinaTensorType":$other,
           "::mlir::kina::EmitErrorFn":$emitError),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::llvm::SmallVector<int64_t>(other.getShape());
      }]>
  ];
}

// Reverse mode: how an op's operands' cotangents follow from its result's.
// Every kina op declares it (Kina_Op), so an op cannot be added without
// saying how it differentiates, or that it does not.
def Kina_AdjointOpInterface : OpInterface<"AdjointOpInterface"> {
  let cppNamespace = "::mlir::kina";
  let description = [{
    Builds, at `builder`'s insertion point, the cotangent of each operand
    from `cotangent` (the result's, of the result's type): one value per
    operand in `operandCotangents`, null where no gradient flows (integer
    operands such as gather ids). The rules are in
    lib/Dialect/AdjointRules.cpp; `--kina-differentiate` applies them.
    An op that cannot be differentiated fails with a located error.
  }];
  let methods = [
    InterfaceMethod<
      "Appends one cotangent (or null) per operand, or fails with an error.",
      "::llvm::LogicalResult", "buildAdjoint",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$cotangent,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>
  ];
}

// The static cost view (`--kina-cost`, Python's `m.cost`): the arithmetic
// an op does on one device. Declared with every op (Kina_Op): by default
// one operation per result element, as an elementwise op does; ops that
// only move or view data, reductions and products say otherwise.
def Kina_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::kina";
  let description = [{
    The arithmetic operations (a multiply-add counts two) of one
    application of the op to blocks of the given shapes: each operand's
    and the result's, as one device holds them. The rules beside the
    default are in lib/Dialect/CostRules.cpp.
  }];
  let methods = [
    InterfaceMethod<
      "Operations on blocks of these shapes.",
      "int64_t", "flops",
      (ins "::llvm::ArrayRef<::llvm::SmallVector<int64_t>>":$operandShapes,
           "::llvm::ArrayRef<int64_t>":$resultShape),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::ShapedType::getNumElements(resultShape);
      }]>
  ];
}

// Ops whose attribute `shape` names their result's shape (broadcast,
// reshape): partitioning makes it a block's, merging shards a whole one.
def Kina_NamesShapeOpInterface : OpInterface<"NamesShapeOpInterface"> {
  let cppNamespace = "::mlir::kina";
  let description = [{
    An op with a `shape` attribute that names its result's shape.
  }];
  let methods = [
    InterfaceMethod<"The shape it names.", "::llvm::ArrayRef<int64_t>",
      "getShape">,
    InterfaceMethod<"The attribute's name.", "::mlir::StringAttr",
      "getShapeAttrName">,
    InterfaceMethod<"Names another shape.", "void", "setShape",
      (ins "::llvm::ArrayRef<int64_t>":$shape)>
  ];
}

// The collectives: each names the mesh axis whose devices take part.
def Kina_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::kina";
  let description = [{
    A collective of the kina dialect (`all_gather`, `all_slice`,
    `all_reduce`, `reduce_scatter`, `all_to_all`): the devices that differ
    only in their coordinate on mesh axis `over` take part.
  }];
  let methods = [
    InterfaceMethod<"The mesh axis whose devices take part.",
      "::llvm::StringRef", "getOver">
  ];
}

#endif // KINA_DIALECT_KINAINTERFACES_TD
