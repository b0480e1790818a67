//===- FreshCopy.h - A buffer's value in a buffer of its own ----*- C++ -*-===//
//
// Shared by the passes that untangle buffers after bufferization
// (DistinctResults.cpp, DonatedResults.cpp): a copy of `buffer` into a
// fresh identity-layout allocation, made at `b`'s insertion point.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_LIB_TRANSFORMS_FRESHCOPY_H
#define KINA_LIB_TRANSFORMS_FRESHCOPY_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kina {

inline Value freshCopy(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value copy = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  memref::CopyOp::create(b, loc, buffer, copy);
  return copy;
}

} // namespace mlir::kina

#endif // KINA_LIB_TRANSFORMS_FRESHCOPY_H
