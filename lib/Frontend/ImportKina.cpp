//===- ImportKina.cpp - The `--import-kina` translation -------------------===//
//
// Parse, then MLIRGen. Syntax errors become MLIR diagnostics at their
// FileLineColLoc, so every error of the frontend prints the same way:
// `file:line:col: error: message`.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Frontend/MLIRGen.h"
#include "Kina/Frontend/Parser.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace kina {
OwningOpRef<ModuleOp> importKina(llvm::SourceMgr &sourceMgr,
                                 MLIRContext &context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef filename = buffer->getBufferIdentifier();
  DiagnosticList diags;
  Program program = parseProgram(buffer->getBuffer(), diags);
  for (const FrontendDiagnostic &diag : diags)
    emitError(FileLineColLoc::get(&context, filename, diag.loc.line,
                                  diag.loc.col))
        << diag.message;
  // Type errors in the statements that did parse are worth reporting too;
  // MLIRGen skips what failed to parse without cascading.
  OwningOpRef<ModuleOp> module = mlirGen(context, program, filename);
  if (!diags.empty())
    return nullptr;
  return module;
}

void registerImportKinaTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-kina", "parse and type-check .kina source into the kina dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            importKina(sourceMgr, *context).release());
      },
      [](DialectRegistry &registry) {
        registry.insert<mlir::kina::KinaDialect, func::FuncDialect>();
      });
}
} // namespace kina
