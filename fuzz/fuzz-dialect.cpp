//===- fuzz-dialect.cpp - kina dialect text through verify and lowering ---===//
//
// Parse, verify, canonicalize, --kina-to-linalg: what kina-opt does to
// hand-written IR.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "Kina/InitAll.h"
#include "Kina/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::kina::fuzz::QuietContext quiet;
  // Parse with only kina and func available: the target is kina IR, not
  // upstream parsers (linalg.broadcast's crashes on some malformed text).
  mlir::DialectRegistry kinaOnly;
  mlir::kina::registerAllDialects(kinaOnly);
  quiet.context.appendDialectRegistry(kinaOnly);
  // MLIR's lexer stops at a NUL after the buffer, as every file and
  // MemoryBuffer has: give it one (fuzz data has none).
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          text, mlir::ParserConfig(&quiet.context));
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::DialectRegistry pipeline;
  mlir::kina::registerPipelineDependencies(pipeline);
  quiet.context.appendDialectRegistry(pipeline);
  mlir::PassManager pm(&quiet.context);
  mlir::kina::buildKinaToLinalgPipeline(pm);
  (void)pm.run(*module);
  return 0;
}
