//===- Passes.h - Kina's sharding passes ------------------------*- C++ -*-===//
#ifndef KINA_SHARDING_PASSES_H
#define KINA_SHARDING_PASSES_H

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Sharding/CostRecords.h"

#include "mlir/Pass/Pass.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/Sharding/Passes.h.inc"

/// --kina-propagate-sharding, which also appends a record of every
/// collective it inserts (the data its remarks say) to `records`.
std::unique_ptr<Pass> createPropagateShardingPass(CostRecords &records);

#define GEN_PASS_REGISTRATION
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

#endif // KINA_SHARDING_PASSES_H
