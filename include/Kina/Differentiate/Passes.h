//===- Passes.h - Reverse mode ----------------------------------*- C++ -*-===//
#ifndef KINA_DIFFERENTIATE_PASSES_H
#define KINA_DIFFERENTIATE_PASSES_H

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Differentiate/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Kina/Differentiate/Passes.h.inc"
} // namespace mlir::kina

#endif // KINA_DIFFERENTIATE_PASSES_H
