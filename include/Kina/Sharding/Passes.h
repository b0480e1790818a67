//===- Passes.h - Kina's sharding passes ------------------------*- C++ -*-===//
#ifndef KINA_SHARDING_PASSES_H
#define KINA_SHARDING_PASSES_H

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Sharding/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

#endif // KINA_SHARDING_PASSES_H
