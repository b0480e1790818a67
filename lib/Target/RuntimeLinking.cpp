//===- RuntimeLinking.cpp - Link lib/Runtime's bitcode into a module ------===//
//
// lib/Runtime: the thread pool (ParallelFor.c), the allocator of
// temporaries (Workspace.c) and the collectives of per-device code
// (Collectives.c), as one bitcode module.
//
//===----------------------------------------------------------------------===//
#include "RuntimeLinking.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"

namespace {
#include "Kina/Runtime/RuntimeBitcode.inc"
} // namespace

using namespace mlir;

LogicalResult mlir::kina::linkRuntime(llvm::Module &module, Location loc) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(kRuntimeBitcode),
                        sizeof(kRuntimeBitcode));
  llvm::Expected<std::unique_ptr<llvm::Module>> runtime =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "kina-runtime"),
                             module.getContext());
  if (!runtime)
    return emitError(loc) << "internal error: the runtime bitcode: "
                          << llvm::toString(runtime.takeError());
  // Built for the default target of the same LLVM; generated for the host.
  (*runtime)->setTargetTriple(module.getTargetTriple());
  (*runtime)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*runtime)))
    return emitError(loc) << "internal error: linking the runtime failed";
  // Only the exports stay visible; the rest may be inlined and dropped.
  for (llvm::Function &fn : module)
    if (!fn.isDeclaration() && fn.hasHiddenVisibility())
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  return success();
}
