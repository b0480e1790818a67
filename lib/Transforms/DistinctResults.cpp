//===- DistinctResults.cpp - Return each buffer once ----------------------===//
//
// MLIR 22's buffer-results-to-out-params (with hoisted static allocations)
// crashes when one buffer is returned twice: it replaces the allocation
// with the first out parameter and then visits it again. A function of
// several results returns one buffer twice whenever two results are the
// same value (equal gradients, values CSE merged); each repeat is copied.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::kina {
#define GEN_PASS_DEF_DISTINCTRESULTSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

namespace {
struct DistinctResultsPass
    : mlir::kina::impl::DistinctResultsPassBase<DistinctResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> returned;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (!type || returned.insert(operand.get()).second)
          continue;
        Value copy = memref::AllocOp::create(
            b, ret.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType()));
        memref::CopyOp::create(b, ret.getLoc(), operand.get(), copy);
        operand.set(copy);
      }
    });
  }
};
} // namespace
