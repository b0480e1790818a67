//===- Compiler.cpp - `.kina` source to a shared object -------------------===//
#include "Kina/API/Compiler.h"

#include "Kina/Frontend/MLIRGen.h"
#include "Kina/Target/SharedObject.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

kina::CompileOutput kina::compileKinaSource(const std::string &text,
                                            const std::string &filename,
                                            const std::string &soPath) {
  CompileOutput output;
  // No thread pool: one compile is small, and embedders compile from many
  // threads at once.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, filename), llvm::SMLoc());
  llvm::raw_string_ostream diagnostics(output.diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnostics);

  mlir::OwningOpRef<mlir::ModuleOp> module = importKina(sourceMgr, context);
  if (!module)
    return output;
  mlir::kina::CompileArtifacts artifacts;
  output.ok = succeeded(
      mlir::kina::compileToSharedObject(*module, soPath, &artifacts));
  output.kinaIR = std::move(artifacts.kinaIR);
  output.linalgIR = std::move(artifacts.linalgIR);
  output.llvmIR = std::move(artifacts.llvmIR);
  return output;
}
