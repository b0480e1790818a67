//===- BFloat16Memory.h - BF16 moved as 16-bit integers ---------*- C++ -*-===//
#ifndef KINA_TARGET_BFLOAT16MEMORY_H
#define KINA_TARGET_BFLOAT16MEMORY_H

#include "llvm/IR/Module.h"

namespace mlir::kina {

/// Rewrites every load and store of BF16 (scalar or vector) as one of i16
/// with bitcasts: x86 without AVX512_BF16 keeps a BF16 value that lives
/// across blocks (AddressSanitizer's check between a copy's load and its
/// store) in a float register, and storing it back then rounds through
/// compiler-rt's __truncsfbf2, which the libc-only .so does not have. An
/// i16 moves the bits as they are.
void moveBFloat16AsIntegers(llvm::Module &module);

} // namespace mlir::kina

#endif // KINA_TARGET_BFLOAT16MEMORY_H
