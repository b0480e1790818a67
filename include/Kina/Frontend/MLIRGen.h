//===- MLIRGen.h - `.kina` AST to the kina dialect --------------*- C++ -*-===//
#ifndef KINA_FRONTEND_MLIRGEN_H
#define KINA_FRONTEND_MLIRGEN_H

#include "Kina/Syntax/AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::kina {

class SourceLocations;

/// Builds the kina module of `program`, attaching to every op its
/// location from `locations` (a FileLineColLoc), and verifies it. Errors are emitted as MLIR
/// diagnostics at their source position; on any error the result is null.
mlir::OwningOpRef<mlir::ModuleOp> mlirGen(mlir::MLIRContext &context,
                                          const Program &program,
                                          const SourceLocations &locations);

/// Parses and imports the main buffer of `sourceMgr` (parse errors and
/// type errors alike become diagnostics). Null on any error.
mlir::OwningOpRef<mlir::ModuleOp> importKina(llvm::SourceMgr &sourceMgr,
                                             mlir::MLIRContext &context);

/// Registers the `--import-kina` translation.
void registerImportKinaTranslation();

} // namespace mlir::kina

#endif // KINA_FRONTEND_MLIRGEN_H
