//===- fuzz-frontend.cpp - Bytes into the .kina frontend ------------------===//
#include "FuzzSupport.h"

#include "Kina/Frontend/MLIRGen.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::kina::fuzz::QuietContext quiet;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.kina"),
      llvm::SMLoc());
  (void)mlir::kina::importKina(sourceMgr, quiet.context);
  return 0;
}
