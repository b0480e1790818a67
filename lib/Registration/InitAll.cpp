//===- InitAll.cpp - Register everything Kina adds to MLIR ----------------===//
#include "Kina/InitAll.h"

#include "Kina/AutoShard/Passes.h"
#include "Kina/Conversion/Passes.h"
#include "Kina/Differentiate/Passes.h"
#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Frontend/MLIRGen.h"
#include "Kina/Pipelines/Pipelines.h"
#include "Kina/Sharding/Passes.h"
#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::kina::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::kina::KinaDialect, mlir::func::FuncDialect>();
}

void mlir::kina::registerAllPasses() {
  mlir::kina::registerKinaConversionPasses();
  mlir::kina::registerKinaToLinalgPipeline();
  mlir::kina::registerKinaTransformsPasses();
  mlir::kina::registerKinaShardingPasses();
  mlir::kina::registerKinaAutoShardPasses();
  mlir::kina::registerKinaDifferentiatePasses();
  mlir::kina::registerKinaPipelines();
}

void mlir::kina::registerAllTranslations(const std::string &outputPath) {
  registerImportKinaTranslation();
  registerKinaToSharedObjectTranslation(outputPath);
}
