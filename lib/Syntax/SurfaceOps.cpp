//===- SurfaceOps.cpp - Lookups in the generated surface op table ---------===//
#include "Kina/Syntax/SurfaceOps.h"

#include <cstring>

namespace mlir::kina {
#include "Kina/Syntax/KinaSurfaceOps.inc"
} // namespace mlir::kina

using namespace mlir::kina;

llvm::ArrayRef<SurfaceOp> mlir::kina::surfaceOps() { return surfaceOpTable; }

const SurfaceAttr *SurfaceOp::findAttr(llvm::StringRef name) const {
  for (unsigned i = 0; i < numAttrs; ++i)
    if (name == attrs[i].name)
      return &attrs[i];
  return nullptr;
}

template <typename Pred> static const SurfaceOp *findOp(Pred pred) {
  for (const SurfaceOp &op : surfaceOpTable)
    if (pred(op))
      return &op;
  return nullptr;
}

const SurfaceOp *mlir::kina::lookupSurfaceOp(llvm::StringRef name) {
  if (name.empty())
    return nullptr;
  return findOp([&](const SurfaceOp &op) { return name == op.surfaceName; });
}

const SurfaceOp *mlir::kina::lookupInfixOp(llvm::StringRef token) {
  if (token.empty())
    return nullptr;
  return findOp([&](const SurfaceOp &op) { return token == op.infix; });
}

const SurfaceOp *mlir::kina::lookupPrefixOp(llvm::StringRef token) {
  if (token.empty())
    return nullptr;
  return findOp([&](const SurfaceOp &op) { return token == op.prefix; });
}
