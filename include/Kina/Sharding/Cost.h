//===- Cost.h - What a function computes, holds and sends -------*- C++ -*-===//
#ifndef KINA_SHARDING_COST_H
#define KINA_SHARDING_COST_H

#include "Kina/Sharding/CostRecords.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// The static cost of running `fn` on one device (the whole program on a
/// host; a device's blocks on a mesh). FLOPs are the ops' own counts
/// (CostOpInterface), callees included; the peak is the largest sum of
/// live values, in program order; the collectives are grouped by
/// direction (backward: located `adjoint of ...`), kind and mesh axis,
/// with the bytes each device sends (`bytesSentPerDevice`, what the
/// runtime sends). Fails, with an error, on a function whose placements
/// are not decided (`@auto`: run --kina-propagate-sharding first) or that
/// is still a `kina.reverse_mode` (--kina-differentiate).
FailureOr<FunctionCostRecord> costRecord(func::FuncOp fn);

/// Emits `fn`'s cost record as one remark at `fn` (kina::remarkText) and
/// appends it to `records` when given. `--kina-cost` and every compile (so
/// Python's `Module.cost`, from the records) say it.
LogicalResult remarkCost(func::FuncOp fn, CostRecords *records = nullptr);


} // namespace mlir::kina

#endif // KINA_SHARDING_COST_H
