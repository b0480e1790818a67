//===- Pipeline.cpp - --kina-to-linalg, a pipeline of one-step passes -----===//
#include "Kina/Conversion/Passes.h"
#include "Kina/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::kina::buildKinaToLinalgPasses(OpPassManager &pm) {
  pm.addPass(createPrepareForLinalgPass());
  pm.addPass(createConvertKinaToLinalgPass());
  // A bad gather id is a status the caller gets, never an abort.
  pm.addPass(createAssertsToStatusPass());
  pm.addPass(createEraseMeshPass());
  pm.addPass(createDropKinaAttributesPass());
}

void mlir::kina::registerKinaToLinalgPipeline() {
  PassPipelineRegistration<>(
      "kina-to-linalg",
      "Lower the kina dialect to linalg, tensor, arith and math: prepare, "
      "convert, asserts to status, erase the mesh, drop the kina "
      "attributes; the output names nothing of kina",
      buildKinaToLinalgPasses);
}
