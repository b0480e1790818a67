//===- Optimize.cpp - LLVM's O3 pipeline on a generated module ------------===//
#include "Kina/Target/Optimize.h"

#include "BFloat16Memory.h"
#include "OutlineLoops.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Instrumentation/AddressSanitizer.h"

void mlir::kina::optimizeModule(llvm::Module &module,
                                llvm::TargetMachine &machine,
                                bool sanitizeAddress) {
  outlineTopLevelLoops(module);
  moveBFloat16AsIntegers(module);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // No LLVM loop unrolling: the register tiles are unrolled already (in
  // MLIR); LLVM would fully unroll every static-trip-count loop of every
  // op, scalar fallbacks included, which grows a GPT block to hundreds of
  // thousands of instructions and its compile to tens of seconds.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  // LLVM's tuning for recent x86 prefers 256-bit vectors; the matmul
  // register tile is sized for 512-bit registers where they exist.
  if (machine.getMCSubtargetInfo()->checkFeatures("+avx512f"))
    for (llvm::Function &fn : module)
      if (!fn.isDeclaration())
        fn.addFnAttr("prefer-vector-width", "512");
  if (sanitizeAddress) {
    for (llvm::Function &fn : module)
      if (!fn.isDeclaration())
        fn.addFnAttr(llvm::Attribute::SanitizeAddress);
    builder.registerOptimizerLastEPCallback([](llvm::ModulePassManager &pm,
                                               llvm::OptimizationLevel,
                                               llvm::ThinOrFullLTOPhase) {
      pm.addPass(llvm::AddressSanitizerPass(llvm::AddressSanitizerOptions()));
    });
  }
  // The outlined loop bodies of a model's repeated blocks are identical
  // but for their names: one copy of each is optimized and emitted.
  builder.registerPipelineStartEPCallback(
      [](llvm::ModulePassManager &pm, llvm::OptimizationLevel) {
        pm.addPass(llvm::MergeFunctionsPass());
      });
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

