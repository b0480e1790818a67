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

#endif // KINA_DIALECT_KINAINTERFACES_TD
