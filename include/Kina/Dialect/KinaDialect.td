//===- KinaDialect.td - The kina dialect -------------------*- tablegen -*-===//
#ifndef KINA_DIALECT_KINADIALECT_TD
#define KINA_DIALECT_KINADIALECT_TD

include "mlir/IR/OpBase.td"

def Kina_Dialect : Dialect {
  let name = "kina";
  let summary = "Tensor ops of the Kina language, with a placement in every type";
  let description = [{
    The `kina` dialect is what the `.kina` frontend produces: static-shape
    tensors whose type carries a placement (`@host` today), and the ops of
    the language (slice, concat, gather, matmul, broadcast, reshape,
    transpose, softmax, elementwise arithmetic). Every op's result type is
    inferred from its operands and attributes by one shape rule, which the
    verifier and the frontend share.
  }];
  let cppNamespace = "::mlir::kina";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // Inherent attributes stay in the attribute dictionary so that the
  // frontend can build any op generically from its ODS-generated table.
  let usePropertiesForAttributes = 0;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

#endif // KINA_DIALECT_KINADIALECT_TD
