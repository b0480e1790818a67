//===- OutlineLoops.cpp - Split long functions before LLVM optimizes them -===//
//
// A model's forward lowers to one function holding a loop nest per op that
// is not worth threads (layer norms, softmaxes, residual adds: hundreds in
// a GPT). LLVM's loop passes ask ScalarEvolution whether each loop's entry
// is guarded, and it answers by walking the chain of blocks above the loop
// back to the function's entry: through every loop before it. The time is
// quadratic in the number of loops: the Megatron GPT (367 loops in its
// host form, 233 in its per-device form) took 5.1 s to optimize and 2.4 s
// to emit, the plain GPT (149) 0.8 s and 0.6 s. With each top-level loop
// in a function of its own, the walks are short, and MergeFunctions folds
// the loops that the model's repeated layers share into one copy.
//
//===----------------------------------------------------------------------===//

#include "OutlineLoops.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

using namespace llvm;

// Fewer top-level loops than this: the walks are short enough as they are
// (a parallel task, a small program).
static constexpr size_t kMinTopLevelLoops = 16;

void mlir::kina::outlineTopLevelLoops(Module &module) {
  SmallVector<Function *> functions;
  for (Function &fn : module)
    if (!fn.isDeclaration() && !fn.hasOptNone())
      functions.push_back(&fn);
  for (Function *fn : functions) {
    DominatorTree dominators(*fn);
    LoopInfo loops(dominators);
    if (loops.getTopLevelLoops().size() < kMinTopLevelLoops)
      continue;
    // The loops are disjoint: extracting one leaves the others' blocks as
    // they are (CodeExtractor keeps the dominator tree up to date).
    SmallVector<Loop *> topLevel(loops.begin(), loops.end());
    for (Loop *loop : topLevel) {
      CodeExtractorAnalysisCache cache(*fn);
      CodeExtractor extractor(loop->getBlocks(), &dominators,
                              /*AggregateArgs=*/false, /*BFI=*/nullptr,
                              /*BPI=*/nullptr, /*AC=*/nullptr,
                              /*AllowVarArgs=*/false, /*AllowAlloca=*/false,
                              /*AllocationBlock=*/nullptr, /*Suffix=*/"loop");
      // Inlined back, the long function and its walks would return.
      if (Function *loopFunction = extractor.extractCodeRegion(cache))
        loopFunction->addFnAttr(Attribute::NoInline);
    }
  }
}
