//===- AssertsToStatus.cpp - cf.assert as a returned status ---------------===//
//
// Lowered kina code states what must hold at run time (every gather id in
// range) as `cf.assert`. A shared object must not abort its caller's
// process, so each function that asserts, or calls one that does, instead
// returns the conjunction as an extra, last `i1` result, which the C
// wrapper turns into a status. Callees are rewritten before their callers.
// Keyed on the IR alone: had this step been skipped, the asserts would
// still stop a bad call loudly, never compute on silently.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kina {
#define GEN_PASS_DEF_ASSERTSTOSTATUSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

/// The functions of `module`, callees before callers; fails on recursion.
static FailureOr<SmallVector<func::FuncOp>> calleesFirst(ModuleOp module,
                                                         SymbolTable &symbols) {
  SmallVector<func::FuncOp> order;
  DenseSet<Operation *> done, active;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp fn) -> LogicalResult {
    active.insert(fn);
    WalkResult walk = fn.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || done.contains(callee))
        return WalkResult::advance();
      if (active.contains(callee)) {
        call.emitError("recursive call of '")
            << call.getCallee() << "' is not supported";
        return WalkResult::interrupt();
      }
      return failed(visit(callee)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    active.erase(fn);
    done.insert(fn);
    order.push_back(fn);
    return failure(walk.wasInterrupted());
  };
  for (auto fn : module.getOps<func::FuncOp>())
    if (!done.contains(fn) && failed(visit(fn)))
      return failure();
  return order;
}

LogicalResult mlir::kina::convertAssertsToStatus(ModuleOp module) {
  SymbolTable symbols(module);
  FailureOr<SmallVector<func::FuncOp>> order = calleesFirst(module, symbols);
  if (failed(order))
    return failure();
  DenseSet<Operation *> returnsStatus;
  for (func::FuncOp fn : *order) {
    if (fn.isExternal())
      continue;
    SmallVector<Value> status;
    Block &body = fn.getBody().front();
    SmallVector<Operation *> statusOps;
    fn.walk([&](Operation *op) {
      if (isa<cf::AssertOp>(op))
        statusOps.push_back(op);
      auto call = dyn_cast<func::CallOp>(op);
      if (call && returnsStatus.contains(
                      symbols.lookup<func::FuncOp>(call.getCallee())))
        statusOps.push_back(op);
    });
    for (Operation *op : statusOps) {
      if (op->getBlock() != &body)
        return op->emitError("a run-time check inside a region cannot "
                             "become a returned status");
      if (auto assertion = dyn_cast<cf::AssertOp>(op)) {
        status.push_back(assertion.getArg());
        assertion.erase();
        continue;
      }
      // A call of a function that returns a status: take it too.
      auto call = cast<func::CallOp>(op);
      OpBuilder builder(call);
      auto widened = func::CallOp::create(
          builder, call.getLoc(),
          symbols.lookup<func::FuncOp>(call.getCallee()), call.getOperands());
      call.replaceAllUsesWith(widened.getResults().drop_back());
      status.push_back(widened.getResults().back());
      call.erase();
    }
    if (status.empty())
      continue;
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!ret || fn.getBody().getBlocks().size() != 1)
      return fn.emitError("a function with run-time checks must be one "
                          "block ending in its return");
    OpBuilder builder(ret);
    Value all = status.front();
    for (Value next : ArrayRef<Value>(status).drop_front())
      all = arith::AndIOp::create(builder, ret.getLoc(), all, next);
    SmallVector<Value> operands(ret.getOperands());
    operands.push_back(all);
    ret->setOperands(operands);
    SmallVector<Type> results(fn.getFunctionType().getResults());
    results.push_back(builder.getI1Type());
    fn.setType(builder.getFunctionType(fn.getArgumentTypes(), results));
    returnsStatus.insert(fn);
  }
  return success();
}

namespace {
struct AssertsToStatusPass
    : mlir::kina::impl::AssertsToStatusPassBase<AssertsToStatusPass> {
  void runOnOperation() override {
    if (failed(mlir::kina::convertAssertsToStatus(getOperation())))
      signalPassFailure();
  }
};
} // namespace
