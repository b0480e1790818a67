//===- Cost.h - What a function computes, holds and sends -------*- C++ -*-===//
#ifndef KINA_SHARDING_COST_H
#define KINA_SHARDING_COST_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// Emits one remark at `fn`, the static cost of running it on one device
/// (the whole program on a host; a device's blocks on a mesh):
/// "cost of 'NAME', per device: F FLOPs, P bytes at peak; forward N KIND
/// over AXIS (B B), ...; backward ...; T bytes sent in all". FLOPs are the
/// ops' own counts (CostOpInterface), callees included; the peak is the
/// largest sum of live values, in program order; the collectives are
/// grouped by direction (backward: located `adjoint of ...`), kind and
/// mesh axis, with the bytes each device sends (`bytesSentPerDevice`,
/// what the runtime sends). `--kina-cost` and every compile (so Python's
/// `Module.cost`) say it. Fails, with an error, on a function whose
/// placements are not decided (`@auto`: run --kina-propagate-sharding
/// first) or that is still a `kina.reverse_mode` (--kina-differentiate).
LogicalResult remarkCost(func::FuncOp fn);

} // namespace mlir::kina

#endif // KINA_SHARDING_COST_H
