//===- SurfaceOps.cpp - Lookups in the generated surface op table ---------===//
#include "Kina/Frontend/SurfaceOps.h"

#include <cstring>

namespace kina {
#include "Kina/Frontend/KinaSurfaceOps.inc"
} // namespace kina

using namespace kina;

llvm::ArrayRef<SurfaceOp> kina::surfaceOps() { return surfaceOpTable; }

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

const SurfaceOp *kina::lookupSurfaceOp(llvm::StringRef name) {
  if (name.empty())
    return nullptr;
  return findOp([&](const SurfaceOp &op) { return name == op.surfaceName; });
}

const SurfaceOp *kina::lookupInfixOp(llvm::StringRef token) {
  if (token.empty())
    return nullptr;
  return findOp([&](const SurfaceOp &op) { return token == op.infix; });
}

const SurfaceOp *kina::lookupPrefixOp(llvm::StringRef token) {
  if (token.empty())
    return nullptr;
  return findOp([&](const SurfaceOp &op) { return token == op.prefix; });
}
