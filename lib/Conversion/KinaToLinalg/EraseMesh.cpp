//===- EraseMesh.cpp - The mesh (and pipelines) go once nothing reads them ===//
#include "Kina/Conversion/Passes.h"
#include "Kina/Dialect/KinaDialect.h"

namespace mlir::kina {
#define GEN_PASS_DEF_ERASEMESHPASS
#include "Kina/Conversion/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

namespace {
struct EraseMeshPass : mlir::kina::impl::EraseMeshPassBase<EraseMeshPass> {
  void runOnOperation() override {
    for (MeshOp mesh :
         llvm::make_early_inc_range(getOperation().getOps<MeshOp>()))
      mesh.erase();
    for (PipelineOp pipeline :
         llvm::make_early_inc_range(getOperation().getOps<PipelineOp>()))
      pipeline.erase();
  }
};
} // namespace
