//===- CHeader.h - The C header of a .so ------------------------*- C++ -*-===//
#ifndef KINA_TARGET_CHEADER_H
#define KINA_TARGET_CHEADER_H

#include "Kina/Signature/Signature.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::kina {

/// A C header declaring every export of a shared object with `signature`,
/// guarded by the macro `guard`.
std::string renderCHeader(const ModuleSignature &signature,
                          llvm::StringRef guard);

} // namespace mlir::kina

#endif // KINA_TARGET_CHEADER_H
