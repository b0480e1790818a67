//===- InitAll.cpp - Register everything Kina adds to MLIR ----------------===//
#include "Kina/InitAll.h"

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Frontend/MLIRGen.h"

#include "mlir/IR/DialectRegistry.h"

void kina::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::kina::KinaDialect>();
}

void kina::registerAllPasses() {}

void kina::registerAllTranslations() { registerImportKinaTranslation(); }
