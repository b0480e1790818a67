//===- KinaInterfaces.td - Shape inference interface -------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINAINTERFACES_TD
#define KINA_DIALECT_KINAINTERFACES_TD

include "mlir/IR/OpBase.td"

// The single home of every kina shape rule. The verifier checks the result
// type against it and the frontend asks it for the result type, so a rule
// is never written twice.
def Kina_InferResultTypeOpInterface : OpInterface<"InferResultTypeOpInterface"> {
  let cppNamespace = "::mlir::kina";
  let description = [{
    Computes an op's result type from its operand types and attributes, or
    reports why the op is ill-typed through `emitError`.
  }];
  let methods = [
    StaticInterfaceMethod<
      "Infers the result type, or emits a diagnostic and fails.",
      "::mlir::FailureOr<::mlir::Type>", "inferResultType",
      (ins "::mlir::TypeRange":$operandTypes,
           "::mlir::DictionaryAttr":$attributes,
           "::mlir::kina::EmitErrorFn":$emitError)>
  ];
}

#endif // KINA_DIALECT_KINAINTERFACES_TD
