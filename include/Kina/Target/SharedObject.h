//===- SharedObject.h - An object to a shared object ------------*- C++ -*-===//
#ifndef KINA_TARGET_SHAREDOBJECT_H
#define KINA_TARGET_SHAREDOBJECT_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

namespace mlir::kina {

/// Links the relocatable `object` (its bytes) into a shared object at
/// `path` that needs only libc and libm. On failure no file is left at
/// `path`.
LogicalResult linkSharedObject(StringRef object, StringRef path, Location loc);

} // namespace mlir::kina

#endif // KINA_TARGET_SHAREDOBJECT_H
