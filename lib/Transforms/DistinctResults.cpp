//===- DistinctResults.cpp - Return each buffer once ----------------------===//
//
// MLIR 22's buffer-results-to-out-params (with hoisted static allocations)
// crashes when one buffer is returned twice: it replaces the allocation
// with the first out parameter and then visits it again. A function of
// several results returns one buffer twice whenever two results are the
// same value (equal gradients, values CSE merged); each repeat is copied.
//
//===----------------------------------------------------------------------===//

#include "FreshCopy.h"
#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::kina {
#define GEN_PASS_DEF_DISTINCTRESULTSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using mlir::kina::freshCopy;

namespace {
struct DistinctResultsPass
    : mlir::kina::impl::DistinctResultsPassBase<DistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> returned;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        if (!isa<MemRefType>(operand.get().getType()) ||
            returned.insert(operand.get()).second)
          continue;
        operand.set(freshCopy(b, ret.getLoc(), operand.get()));
      }
    });
  }
};
} // namespace
