//===- Passes.h - Kina's automatic sharding pass ----------------*- C++ -*-===//
#ifndef KINA_AUTOSHARD_PASSES_H
#define KINA_AUTOSHARD_PASSES_H

#include "Kina/AutoShard/AutoShard.h"
#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kina {
#define GEN_PASS_DECL
#include "Kina/AutoShard/Passes.h.inc"

/// --kina-auto-shard with `options`, appending each function's report to
/// `reports`.
std::unique_ptr<Pass>
createAutoShardPass(const AutoShardOptions &options,
                    std::vector<AutoShardReport> &reports);

/// Whether a function of `module` has an `@auto` parameter or result
/// (what --kina-auto-shard places).
bool hasAutoPlacements(ModuleOp module);

#define GEN_PASS_REGISTRATION
#include "Kina/AutoShard/Passes.h.inc"
} // namespace mlir::kina

#endif // KINA_AUTOSHARD_PASSES_H
