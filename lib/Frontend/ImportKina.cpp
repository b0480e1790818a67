//===- ImportKina.cpp - The `--import-kina` translation -------------------===//
//
// Parse, then MLIRGen. Syntax errors become MLIR diagnostics at their
// FileLineColLoc (or where a `#loc(...)` comment says), so every error of the frontend prints the same way:
// `file:line:col: error: message`.
//
//===----------------------------------------------------------------------===//

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Frontend/MLIRGen.h"
#include "Kina/Frontend/SourceLocations.h"
#include "Kina/Syntax/Parser.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace mlir::kina {
OwningOpRef<ModuleOp> importKina(llvm::SourceMgr &sourceMgr,
                                 MLIRContext &context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef filename = buffer->getBufferIdentifier();

  // Hold back every diagnostic of both phases, to report them in source
  // order rather than syntax errors first.
  struct Held {
    Location loc;
    DiagnosticSeverity severity;
    std::string message;
  };
  std::vector<Held> held;
  OwningOpRef<ModuleOp> module;
  {
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
      held.push_back({diag.getLocation(), diag.getSeverity(), diag.str()});
      return success();
    });
    DiagnosticList diags;
    SourceLocations locations(context, filename, buffer->getBuffer());
    Program program = parseProgram(buffer->getBuffer(), diags);
    for (const FrontendDiagnostic &diag : diags)
      emitError(locations.at(diag.loc.line, diag.loc.col)) << diag.message;
    // Type errors in the statements that did parse are worth reporting
    // too; MLIRGen skips what failed to parse without cascading.
    module = mlirGen(context, program, locations);
  }
  // The first file position in `loc` (an op's location may be named).
  auto position = [](Location loc) {
    std::pair<unsigned, unsigned> at(0u, 0u);
    loc->walk([&](Location inner) {
      auto fileLoc = dyn_cast<FileLineColLoc>(inner);
      if (!fileLoc)
        return WalkResult::advance();
      at = {fileLoc.getLine(), fileLoc.getColumn()};
      return WalkResult::interrupt();
    });
    return at;
  };
  // Sort indices, so that diagnostics at one position keep their order.
  std::vector<size_t> order(held.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](size_t a, size_t b) {
    return std::make_pair(position(held[a].loc), a) <
           std::make_pair(position(held[b].loc), b);
  });
  for (size_t i : order)
    context.getDiagEngine().emit(held[i].loc, held[i].severity)
        << held[i].message;
  if (!held.empty())
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
} // namespace mlir::kina
