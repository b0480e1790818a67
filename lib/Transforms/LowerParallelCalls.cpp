//===- LowerParallelCalls.cpp - Outlined loops as thread-pool launches ----===//
//
// The pool (lib/Runtime/ParallelFor.c) calls `task(ctx, begin, end)`. Each
// function outlined by kina-outline-parallel-loops gets such a task, which
// unpacks the loop's captured values from a struct, and its call sites
// store them there and launch.
//
//===----------------------------------------------------------------------===//

#include "Kina/Transforms/Passes.h"

#include "Kina/Dialect/KinaDialect.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kina {
#define GEN_PASS_DEF_LOWERPARALLELCALLSPASS
#include "Kina/Transforms/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;

static constexpr llvm::StringLiteral kLaunch = "kina_parallel_for";

/// `void kina_parallel_for(ptr task, ptr ctx, i64 iterations)`.
static LLVM::LLVMFuncOp declareLaunch(ModuleOp module, OpBuilder &b) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kLaunch))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::LLVMFuncOp::create(
      b, module.getLoc(), kLaunch,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  {ptr, ptr, b.getI64Type()}));
}

/// `@body_task(ctx, begin, end)`: loads the captures, calls `@body`.
static LLVM::LLVMFuncOp createTask(LLVM::LLVMFuncOp body,
                                   LLVM::LLVMStructType context,
                                   SymbolTable &symbols) {
  OpBuilder b(body);
  b.setInsertionPointAfter(body);
  Location loc = body.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type i64 = b.getI64Type();
  auto task = LLVM::LLVMFuncOp::create(
      b, loc, (body.getName() + "_task").str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  {ptr, i64, i64}),
      LLVM::Linkage::Internal);
  symbols.insert(task);
  Block *entry = task.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  SmallVector<Value> args = {entry->getArgument(1), entry->getArgument(2)};
  for (auto [i, type] : llvm::enumerate(context.getBody())) {
    Value field =
        LLVM::GEPOp::create(b, loc, ptr, context, entry->getArgument(0),
                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, type, field));
  }
  LLVM::CallOp::create(b, loc, body, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return task;
}

static LogicalResult lowerCall(LLVM::CallOp call, LLVM::LLVMFuncOp task,
                               LLVM::LLVMStructType context,
                               LLVM::LLVMFuncOp launch) {
  if (!matchPattern(call.getArgOperands()[0], m_Zero()))
    return call.emitError("a parallel body is launched from iteration 0");
  auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
  if (!caller)
    return call.emitError("a parallel launch outside an llvm.func (was the "
                          "module fully lowered to LLVM?)");
  Location loc = call.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(call.getContext());
  // The struct is allocated once per function, in its entry block.
  OpBuilder b = OpBuilder::atBlockBegin(&caller.getBody().front());
  Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1);
  Value storage = LLVM::AllocaOp::create(b, loc, ptr, context, one);
  b.setInsertionPoint(call);
  for (auto [i, arg] : llvm::enumerate(call.getArgOperands().drop_front(2))) {
    Value field =
        LLVM::GEPOp::create(b, loc, ptr, context, storage,
                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    LLVM::StoreOp::create(b, loc, arg, field);
  }
  Value taskAddress = LLVM::AddressOfOp::create(b, loc, task);
  LLVM::CallOp::create(
      b, loc, launch,
      ValueRange{taskAddress, storage, call.getArgOperands()[1]});
  call.erase();
  return success();
}

namespace {
struct LowerParallelCallsPass
    : mlir::kina::impl::LowerParallelCallsPassBase<LowerParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<LLVM::LLVMFuncOp> bodies;
    mlir::kina::KinaDialect::ParallelBodyAttrHelper parallelBody(&getContext());
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (parallelBody.isAttrPresent(fn))
        bodies.push_back(fn);
    if (bodies.empty())
      return;
    OpBuilder b(module.getContext());
    LLVM::LLVMFuncOp launch = declareLaunch(module, b);
    // The calls of each body, found in one walk (one per body would be
    // quadratic: a GPT has hundreds of bodies).
    llvm::DenseMap<StringAttr, SmallVector<LLVM::CallOp>> callsOf;
    module.walk([&](LLVM::CallOp call) {
      if (auto callee = call.getCalleeAttr())
        callsOf[callee.getAttr()].push_back(call);
    });
    for (LLVM::LLVMFuncOp body : bodies) {
      ArrayRef<Type> params = body.getFunctionType().getParams();
      if (params.size() < 2 || !params[0].isInteger(64) ||
          !params[1].isInteger(64)) {
        body.emitError("a parallel body takes (i64 begin, i64 end, ...)");
        return signalPassFailure();
      }
      auto context = LLVM::LLVMStructType::getLiteral(module.getContext(),
                                                      params.drop_front(2));
      LLVM::LLVMFuncOp task = createTask(body, context, symbols);
      for (LLVM::CallOp call : callsOf.lookup(body.getNameAttr()))
        if (failed(lowerCall(call, task, context, launch)))
          return signalPassFailure();
    }
  }
};
} // namespace
