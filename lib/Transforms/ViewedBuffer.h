//===- ViewedBuffer.h - The buffer a view is of -----------------*- C++ -*-===//
//
// Shared by the passes that follow views after bufferization
// (DonatedResults.cpp, ZeroFirstKBlock.cpp): `value` through every view op
// (subview, reshape, cast, ...) to the buffer it views; itself when it is
// not a view.
//
//===----------------------------------------------------------------------===//
#ifndef KINA_LIB_TRANSFORMS_VIEWEDBUFFER_H
#define KINA_LIB_TRANSFORMS_VIEWEDBUFFER_H

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kina {

inline Value viewedBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

} // namespace mlir::kina

#endif // KINA_LIB_TRANSFORMS_VIEWEDBUFFER_H
