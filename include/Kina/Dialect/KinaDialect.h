//===- KinaDialect.h - The kina dialect -------------------------*- C++ -*-===//
//
// Include this header to use the kina dialect: it brings the dialect, its
// placement attribute, its tensor type and its ops.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_DIALECT_KINADIALECT_H
#define KINA_DIALECT_KINADIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Kina/Dialect/KinaOpsDialect.h.inc"

#include "Kina/Dialect/KinaEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "Kina/Dialect/KinaAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "Kina/Dialect/KinaOpsTypes.h.inc"

namespace mlir::kina {
/// Starts a diagnostic; the shape rules append their message to it.
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Checks an op's result type against its shape rule (the ops' verifier).
LogicalResult verifyInferredResultType(Operation *op);

/// Formats a shape as `[1, 4, 4]` for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);
} // namespace mlir::kina

#include "Kina/Dialect/KinaInterfaces.h.inc"

#define GET_OP_CLASSES
#include "Kina/Dialect/KinaOps.h.inc"

#endif // KINA_DIALECT_KINADIALECT_H
