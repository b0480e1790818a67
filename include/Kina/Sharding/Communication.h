//===- Communication.h - What collectives move ------------------*- C++ -*-===//
#ifndef KINA_SHARDING_COMMUNICATION_H
#define KINA_SHARDING_COMMUNICATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kina {

/// Emits one remark at `fn` (none when it has no collectives):
/// "communication of 'NAME', per device: forward N KIND over AXIS (B B),
/// ...; backward ...; T bytes in all", its collectives grouped by
/// direction (backward: located `adjoint of ...`), kind and mesh axis,
/// with the bytes each device sends. `--kina-communication` and every
/// compile (so Python's `Module.communication`) say it.
void remarkCommunication(func::FuncOp fn);

} // namespace mlir::kina

#endif // KINA_SHARDING_COMMUNICATION_H
