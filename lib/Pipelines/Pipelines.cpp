//===- Pipelines.cpp - kina to the LLVM dialect ---------------------------===//
//
// The stages are upstream passes; Kina contributes the lowering, the
// copy rewrite and the order. Results are caller-owned: every tensor
// result becomes a last pointer parameter (buffer-results-to-out-params),
// and arguments are bare pointers, which is the shared object's C ABI.
//
//===----------------------------------------------------------------------===//

#include "Kina/Pipelines/Pipelines.h"

#include "Kina/AutoShard/Passes.h"
#include "Kina/CPU/MatmulModel.h"
#include "Kina/Conversion/Passes.h"
#include "Kina/Differentiate/Passes.h"
#include "Kina/Sharding/Passes.h"
#include "Kina/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::kina::buildKinaToLinalgPipeline(OpPassManager &pm) {
  // reverseMode functions first; functions with `@auto` placements
  // placed by the solver (under its default machine figures, as
  // --kina-auto-shard); then mesh-placed programs run as their host form
  // (nothing happens to programs without a mesh).
  pm.addPass(createDifferentiatePass());
  pm.addPass(createAutoShardPass());
  pm.addPass(createPropagateShardingPass());
  pm.addPass(createPartitionPass());
  buildOneDeviceToLinalgPipeline(pm);
}

void mlir::kina::buildOneDeviceToLinalgPipeline(OpPassManager &pm) {
  buildKinaToLinalgPasses(pm);
  pm.addPass(createCanonicalizerPass());
}

void mlir::kina::buildLinalgToLLVMPipeline(
    OpPassManager &pm, const mlir::kina::CPUDescription &cpu,
    llvm::ArrayRef<mlir::kina::TunedMatmul> tuned) {
  // Register and cache tiles from the target CPU's registers, FMA latency
  // and caches (lib/CPU/MatmulModel.cpp).
  mlir::kina::MatmulParameters model = mlir::kina::chooseMatmulParameters(cpu);
  TileMatmulsPassOptions matmul;
  matmul.tileM = model.tileM;
  matmul.tileN = model.tileN;
  matmul.cacheM = model.cacheM;
  matmul.cacheN = model.cacheN;
  matmul.cacheK = model.cacheK;
  matmul.streamRows = model.streamRows;
  matmul.l1WayBytes = model.l1WayBytes;
  matmul.bf16Dot = cpu.bf16DotProduct;
  for (const mlir::kina::TunedMatmul &t : tuned)
    matmul.tuned.push_back(mlir::kina::formatTunedMatmul(t));
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  // A result declared `@reuses(p)` is computed into p's tensor (before the
  // tilings, which then carry p as their destination)...
  pm.addPass(createDonateDestinationsPass());
  pm.addNestedPass<func::FuncOp>(createTileMatmulsPass(matmul));
  pm.addNestedPass<func::FuncOp>(createSplitParallelOpsPass());
  TileTransposesPassOptions transposes;
  if (cpu.floatLanes() == 8 || cpu.floatLanes() == 16)
    transposes.registerSide = cpu.floatLanes();
  pm.addNestedPass<func::FuncOp>(createTileTransposesPass(transposes));
  pm.addPass(createCanonicalizerPass());
  // The accumulator tile: out of the K loop, carried in registers.
  pm.addPass(createLoopInvariantSubsetHoistingPass());
  pm.addPass(createCanonicalizerPass());
  // A value computed into a fresh tensor and then inserted into a larger
  // one (an all-gather's own block) is computed in its place instead.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Tiles write back into identical subviews: CSE turns those copies into
  // self-copies, which canonicalization drops.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // ... and returned in p's buffer, not through an out parameter.
  pm.addPass(createDropDonatedResultsPass());
  // Each result its own buffer: upstream's out-params crash on repeats.
  pm.addNestedPass<func::FuncOp>(createDistinctResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // ... and a result returned as a reshape of a temporary (upstream copies
  // it out) computed in the out buffer too.
  pm.addNestedPass<func::FuncOp>(createWriteResultsInPlacePass());
  // Small temporaries live on the stack: no malloc/free per call for them.
  // Large ones stay on the heap (a deep model would overflow the stack).
  bufferization::PromoteBuffersToStackPassOptions toStack;
  toStack.maxAllocSizeInBytes = 4096;
  toStack.maxRankOfAllocatedMemRef = 4;
  pm.addNestedPass<func::FuncOp>(
      bufferization::createPromoteBuffersToStackPass(toStack));
  bufferization::buildBufferDeallocationPipeline(pm);
  // Upstream frees at the end of the block; each temporary is freed after
  // its last use instead, so the next one reuses memory still in cache.
  pm.addNestedPass<func::FuncOp>(createFreeAfterLastUsePass());
  pm.addPass(createCopiesToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  // B's rows, a page apart, prefetched ahead of the loops that pack them:
  // lm_head's shape (128 x 768 x 32000) 8-12% faster on Zen 5.
  pm.addNestedPass<func::FuncOp>(createPrefetchPackedRowsPass());
  // ... and the whole next block fetched while this one computes, so that
  // packing reads from cache.
  pm.addNestedPass<func::FuncOp>(createPrefetchNextBlockPass());
  // The first K block's accumulators start as zeros, not loaded from a
  // zero-filled result: the fill's pass over C goes.
  pm.addNestedPass<func::FuncOp>(createZeroFirstKBlockPass());
  // Parallel tile loops become functions the thread pool calls.
  pm.addPass(createOutlineParallelLoopsPass());
  pm.addPass(createMergeParallelBodiesPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Unrolled: the loop form stages vectors through stack slots allocated
  // inside the enclosing loops, which grow the stack when LLVM cannot
  // promote them.
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true; // vdpbf16ps (kina-tile-matmuls' bf16-dot)
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addNestedPass<func::FuncOp>(createApproximateMathPass());
  pm.addNestedPass<func::FuncOp>(createNarrowFloatsPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  // Temporaries through lib/Runtime/Workspace.c, which reuses them across
  // calls.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createLowerParallelCallsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::kina::buildKinaToLLVMPipeline(OpPassManager &pm) {
  buildKinaToLinalgPipeline(pm);
  buildLinalgToLLVMPipeline(pm, mlir::kina::hostCPU());
}

void mlir::kina::registerPipelineDependencies(DialectRegistry &registry) {
  // The upstream stages reach into many dialects' interface models; taking
  // them all keeps this list from going stale as the pipeline grows.
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

void mlir::kina::registerKinaPipelines() {
  PassPipelineRegistration<>(
      "kina-to-llvm",
      "Lower kina to the LLVM dialect for the host CPU: bufferized, "
      "caller-owned results, loops, bare-pointer arguments",
      buildKinaToLLVMPipeline);
  // The second half alone: for a per-device program (`--kina-partition=
  // form=spmd --kina-to-linalg`), whose collectives the first half's
  // partitioner would refuse.
  PassPipelineRegistration<>(
      "kina-linalg-to-llvm",
      "Lower the output of --kina-to-linalg to the LLVM dialect for the "
      "host CPU (the second half of --kina-to-llvm)",
      [](OpPassManager &pm) {
        buildLinalgToLLVMPipeline(pm, mlir::kina::hostCPU());
      });
}
