//===- AutoShardPass.cpp - --kina-auto-shard ------------------------------===//

#include "Kina/AutoShard/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"

namespace mlir::kina {
#define GEN_PASS_DEF_AUTOSHARDPASS
#include "Kina/AutoShard/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

static bool hasAutoPlacement(func::FuncOp fn) {
  auto isAuto = [](Type type) {
    auto tensor = dyn_cast<KinaTensorType>(type);
    return tensor && tensor.getPlacement().isAuto();
  };
  return llvm::any_of(fn.getArgumentTypes(), isAuto) ||
         llvm::any_of(fn.getResultTypes(), isAuto);
}

bool mlir::kina::hasAutoPlacements(ModuleOp module) {
  return llvm::any_of(module.getOps<func::FuncOp>(), hasAutoPlacement);
}

/// Marks `fn`'s parameters that `call` passes where its callee takes a
/// weight (`kina.weight`, a gradient function's differentiated
/// parameters): inlined, the call no longer says so, and the memory
/// ledger (Module.cost) counts them as weights, as for a call.
static void markWeightsPassed(func::FuncOp fn, func::CallOp call,
                              func::FuncOp callee) {
  StringRef weight = KinaDialect::WeightAttrHelper::getNameStr();
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    // Through the reshard the frontend puts between a placed parameter
    // and an `@auto` one.
    Value passed = operand;
    while (auto reshard = passed.getDefiningOp<ReshardOp>())
      passed = reshard.getOperand();
    auto arg = dyn_cast<BlockArgument>(passed);
    if (arg && arg.getOwner() == &fn.getBody().front() &&
        callee.getArgAttr(i, weight))
      fn.setArgAttr(arg.getArgNumber(), weight, UnitAttr::get(fn.getContext()));
  }
}

/// Inlines every call in `fn`, callees' calls included.
static LogicalResult inlineCalls(func::FuncOp fn, SymbolTable &symbols) {
  InlinerInterface interface(fn.getContext());
  InlinerConfig config;
  while (true) {
    SmallVector<func::CallOp> calls;
    fn.walk([&](func::CallOp call) { calls.push_back(call); });
    if (calls.empty())
      return success();
    for (func::CallOp call : calls) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee)
        markWeightsPassed(fn, call, callee);
      if (!callee || callee.isExternal() ||
          failed(inlineCall(interface, config.getCloneCallback(), call,
                            callee, &callee.getBody())))
        return call.emitError("auto-shard: cannot inline this call");
      call->erase();
    }
  }
}

/// The calls of `fn` (placed) take and give its new types: an argument
/// is converted to the parameter's placement (the reshard the frontend
/// put there, retyped, or a new one), a result has the placement returned.
static void retypeCalls(ModuleOp module, func::FuncOp fn) {
  module.walk([&](func::CallOp call) {
    if (call.getCallee() != fn.getName())
      return;
    for (auto [operand, type] :
         llvm::zip_equal(call->getOpOperands(), fn.getArgumentTypes())) {
      if (operand.get().getType() == type)
        continue;
      auto reshard = operand.get().getDefiningOp<ReshardOp>();
      if (reshard && reshard->hasOneUse() &&
          placementOf(reshard.getResult()).isAuto()) {
        reshard.getResult().setType(type);
        continue;
      }
      OpBuilder builder(call);
      operand.set(ReshardOp::create(builder, call.getLoc(), type,
                                    operand.get()));
    }
    for (auto [result, type] :
         llvm::zip_equal(call.getResults(), fn.getResultTypes()))
      result.setType(type);
  });
}

namespace {
struct AutoShardPass
    : mlir::kina::impl::AutoShardPassBase<AutoShardPass> {
  using AutoShardPassBase::AutoShardPassBase;
  AutoShardPass(const AutoShardOptions &given,
                std::vector<AutoShardReport> *reports)
      : reports(reports) {
    objective = given.objective == AutoShardOptions::Objective::Bytes
                    ? "bytes"
                    : "time";
    budget = given.budgetBytes;
    enumerateUpTo = given.enumerateUpTo;
    alternatives = given.alternatives;
    explain = given.explain;
    secondsLimit = given.secondsLimit;
    tieLayers = given.tieLayers;
    machine = given.machine;
    fromOptions = true;
  }

  /// Given in C++ (per collective kind), not as the pass's options.
  MachineModel machine;
  bool fromOptions = false;

  std::vector<AutoShardReport> *reports = nullptr;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (objective != "time" && objective != "bytes") {
      module.emitError() << "--kina-auto-shard: objective='" << objective
                         << "'; it is time or bytes";
      return signalPassFailure();
    }
    if (budget < 0 || enumerateUpTo < 0 || alternatives < 0) {
      module.emitError() << "--kina-auto-shard: budget, enumerate and "
                            "alternatives are counts (0: none), got "
                         << static_cast<int64_t>(budget) << ", "
                         << static_cast<int64_t>(enumerateUpTo) << " and "
                         << static_cast<int64_t>(alternatives);
      return signalPassFailure();
    }
    AutoShardOptions options;
    options.objective = objective == "bytes"
                            ? AutoShardOptions::Objective::Bytes
                            : AutoShardOptions::Objective::Time;
    options.budgetBytes = budget;
    options.enumerateUpTo = enumerateUpTo;
    options.alternatives = alternatives;
    options.explain.assign(explain.begin(), explain.end());
    if (fromOptions) {
      options.machine = machine;
    } else {
      options.machine.flopsPerSecond = flopsPerSecond;
      options.machine.memoryBytesPerSecond = memoryBytesPerSecond;
      for (MachineModel::Collective &collective : options.machine.collectives)
        collective = {collectiveLatency, collectiveBytesPerSecond};
    }
    options.secondsLimit = secondsLimit;
    options.tieLayers = tieLayers;

    // Every function with @auto placements is placed, each on its whole
    // body: its calls inlined first (from the callees as written, before
    // any is placed), then solved one by one.
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> placed =
        llvm::filter_to_vector(module.getOps<func::FuncOp>(), hasAutoPlacement);
    for (func::FuncOp fn : placed)
      if (failed(inlineCalls(fn, symbols)))
        return signalPassFailure();
    for (func::FuncOp fn : placed) {
      AutoShardReport report;
      if (failed(autoShard(fn, options, &report)))
        return signalPassFailure();
      retypeCalls(module, fn);
      if (reports)
        reports->push_back(std::move(report));
    }
  }
};
} // namespace

std::unique_ptr<Pass>
mlir::kina::createAutoShardPass(const AutoShardOptions &options,
                                std::vector<AutoShardReport> &reports) {
  return std::make_unique<AutoShardPass>(options, &reports);
}
