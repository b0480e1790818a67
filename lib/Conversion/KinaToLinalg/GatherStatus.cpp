//===- GatherStatus.cpp - Return "all ids in range" from functions --------===//
//
// A gather clamps its ids; whether it had to must reach the caller. Each
// function that computes gather checks, or calls a function returning one,
// gets an extra, last `i1` result: the conjunction of all of them. Callees
// are rewritten before their callers.
//
//===----------------------------------------------------------------------===//

#include "Kina/Conversion/KinaToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::kina;

LogicalResult mlir::kina::returnGatherStatus(ModuleOp module,
                                             ArrayRef<Value> checks) {
  DenseMap<Operation *, SmallVector<Value>> statusOf;
  for (Value check : checks)
    statusOf[check.getDefiningOp()->getParentOfType<func::FuncOp>()]
        .push_back(check);

  // Callees first (post-order over the call graph).
  SymbolTable symbols(module);
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

  DenseSet<Operation *> returnsStatus;
  for (func::FuncOp fn : order) {
    SmallVector<Value> &status = statusOf[fn];
    SmallVector<func::CallOp> calls;
    fn.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || !returnsStatus.contains(callee))
        continue;
      OpBuilder builder(call);
      auto widened = func::CallOp::create(builder, call.getLoc(), callee,
                                          call.getOperands());
      call.replaceAllUsesWith(widened.getResults().drop_back());
      status.push_back(widened.getResults().back());
      call.erase();
    }
    if (status.empty() || fn.isExternal())
      continue;
    // Kina functions are one block ending in their only return.
    auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
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
