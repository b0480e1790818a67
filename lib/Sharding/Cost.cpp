//===- Cost.cpp - What a function computes, holds and sends ---------------===//
//
// The static cost view, one remark per function, before anything runs:
// the arithmetic each op declares (CostOpInterface), the peak of the
// buffers live at once, and what the collectives send. A value is live
// from the op that makes it to its last use (arguments throughout): the
// program order before fusion, which fusion and in-place updates only
// lower. A call adds its callee's FLOPs, collectives and, while it runs,
// its temporaries; a result written into a parameter's buffer
// (`@reuses`) adds nothing, being that buffer. The bytes live are kept by
// what they hold (the memory
// ledger, MemoryBytes), classified from the program's structure.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Cost.h"
#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Passes.h"
#include "Kina/Sharding/Reshard.h"

#include "llvm/ADT/SetVector.h"

#include <map>

namespace mlir::kina {
#define GEN_PASS_DEF_COSTPASS
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

namespace {
struct Traffic {
  int64_t count = 0, bytes = 0;
};

/// direction (backward?) -> (kind, mesh axis) -> traffic, in a stable
/// order.
using TrafficTable =
    std::map<bool, std::map<std::pair<std::string, std::string>, Traffic>>;

/// What one application of a function costs a device.
struct FunctionCost {
  int64_t flops = 0;
  int64_t peakBytes = 0;     // arguments included
  int64_t argumentBytes = 0; // the caller's buffers
  TrafficTable traffic;      // callees' included
  int64_t bytesSent = 0;
  /// The ledger of the arguments and of the values live at the peak,
  /// and the op that reaches it.
  mlir::kina::MemoryBytes atRest, atPeak;
  std::string peakLocation;
  /// The parameters that are weights, the results that are gradients.
  DenseSet<unsigned> weightArgs, gradientResults;
};

enum class Held { Weight, Gradient, OptimizerState, Activation };

int64_t &slot(mlir::kina::MemoryBytes &bytes, Held held) {
  switch (held) {
  case Held::Weight:
    return bytes.weights;
  case Held::Gradient:
    return bytes.gradients;
  case Held::OptimizerState:
    return bytes.optimizerState;
  case Held::Activation:
    return bytes.activations;
  }
  llvm_unreachable("a class of bytes");
}

mlir::kina::MemoryBytes operator-(mlir::kina::MemoryBytes a,
                                  const mlir::kina::MemoryBytes &b) {
  a.weights -= b.weights;
  a.gradients -= b.gradients;
  a.optimizerState -= b.optimizerState;
  a.activations -= b.activations;
  return a;
}

void operator+=(mlir::kina::MemoryBytes &a, const mlir::kina::MemoryBytes &b) {
  a.weights += b.weights;
  a.gradients += b.gradients;
  a.optimizerState += b.optimizerState;
  a.activations += b.activations;
}

class CostModel {
public:
  explicit CostModel(MeshOp mesh) : mesh(mesh) {}

  const FunctionCost &of(func::FuncOp fn);
  /// What each value of `fn` holds, where it is not an activation.
  DenseMap<Value, Held> classify(func::FuncOp fn);

  SmallVector<int64_t> shapeOf(Value value) const {
    auto type = dyn_cast<KinaTensorType>(value.getType());
    if (!type)
      return {};
    return mesh ? blockShape(type, mesh) : SmallVector<int64_t>(type.getShape());
  }
  int64_t bytesOf(Value value) const {
    auto type = dyn_cast<KinaTensorType>(value.getType());
    if (!type)
      return 0;
    return ShapedType::getNumElements(shapeOf(value)) *
           mlir::kina::dtypeInfo(type.getDType()).bytes;
  }

private:
  MeshOp mesh;
  std::map<Operation *, FunctionCost> known;
};
} // namespace

const FunctionCost &CostModel::of(func::FuncOp fn) {
  auto found = known.find(fn);
  if (found != known.end())
    return found->second;
  FunctionCost cost;
  known[fn] = cost; // a recursive call counts nothing more
  if (fn.isExternal())
    return known[fn];
  Block &body = fn.getBody().front();
  DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  DenseMap<Value, Held> held = classify(fn);
  auto heldAs = [&](Value value) {
    auto it = held.find(value);
    return it != held.end() ? it->second : Held::Activation;
  };
  for (BlockArgument arg : body.getArguments())
    if (heldAs(arg) == Held::Weight)
      cost.weightArgs.insert(arg.getArgNumber());
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (heldAs(value) == Held::Gradient)
      cost.gradientResults.insert(i);
  for (BlockArgument arg : body.getArguments()) {
    cost.argumentBytes += bytesOf(arg);
    slot(cost.atRest, heldAs(arg)) += bytesOf(arg);
  }
  // A result written into a parameter's buffer (`@reuses`) is that
  // buffer, counted with the arguments.
  DenseSet<Value> inPlace;
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (fn.getResultAttr(i, KinaDialect::ReusesAttrHelper::getNameStr()))
      inPlace.insert(ret.getOperand(i));
  int64_t live = cost.argumentBytes;
  mlir::kina::MemoryBytes liveHeld = cost.atRest;
  cost.peakBytes = live;
  cost.atPeak = liveHeld;
  for (Operation &op : body) {
    int64_t during = 0; // a callee's temporaries while it runs
    mlir::kina::MemoryBytes duringHeld;
    if (auto costed = dyn_cast<CostOpInterface>(&op)) {
      SmallVector<SmallVector<int64_t>> operands = llvm::map_to_vector(
          op.getOperands(), [&](Value v) { return shapeOf(v); });
      cost.flops += costed.flops(operands, shapeOf(op.getResult(0)));
    } else if (auto call = dyn_cast<func::CallOp>(&op)) {
      if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr())) {
        const FunctionCost &inner = of(callee);
        cost.flops += inner.flops;
        during = inner.peakBytes - inner.argumentBytes;
        duringHeld = inner.atPeak - inner.atRest;
        for (auto &[backward, kinds] : inner.traffic)
          for (auto &[key, t] : kinds) {
            Traffic &mine = cost.traffic[backward][key];
            mine.count += t.count;
            mine.bytes += t.bytes;
          }
        cost.bytesSent += inner.bytesSent;
      }
    }
    if (auto collective = dyn_cast<CollectiveOpInterface>(&op)) {
      std::pair<std::string, std::string> key = {
          op.getName().stripDialect().str(), collective.getOver().str()};
      Traffic &t = cost.traffic[isAdjointLoc(op.getLoc())][key];
      int64_t bytes = bytesSentPerDevice(&op);
      t.count += 1;
      t.bytes += bytes;
      cost.bytesSent += bytes;
    }
    auto add = [&](Value value, int64_t sign) {
      int64_t bytes = inPlace.contains(value) ? 0 : bytesOf(value);
      live += sign * bytes;
      slot(liveHeld, heldAs(value)) += sign * bytes;
    };
    for (Value result : op.getResults())
      add(result, +1);
    if (live + during > cost.peakBytes) {
      cost.peakBytes = live + during;
      cost.atPeak = liveHeld;
      cost.atPeak += duringHeld;
      cost.peakLocation = locationText(op.getLoc());
    }
    // (Each value once: `y * y` frees y once.)
    for (Value operand : llvm::SetVector<Value>(op.operand_begin(),
                                                 op.operand_end()))
      if (!isa<BlockArgument>(operand) && lastUse.lookup(operand) == &op)
        add(operand, -1);
    for (Value result : op.getResults())
      if (result.use_empty())
        add(result, -1);
  }
  return known[fn] = cost;
}

DenseMap<Value, Held> CostModel::classify(func::FuncOp fn) {
  DenseMap<Value, Held> held;
  Block &body = fn.getBody().front();
  auto calleeOf = [&](func::CallOp call) {
    return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
  };
  // Weights: marked (the gradient function's), or passed where a callee
  // takes a weight.
  for (BlockArgument arg : body.getArguments())
    if (fn.getArgAttr(arg.getArgNumber(),
                      KinaDialect::WeightAttrHelper::getNameStr()))
      held[arg] = Held::Weight;
  for (Operation &op : body)
    if (auto call = dyn_cast<func::CallOp>(&op))
      if (func::FuncOp callee = calleeOf(call))
        for (unsigned i : of(callee).weightArgs)
          if (isa<BlockArgument>(call.getOperand(i)))
            held[call.getOperand(i)] = Held::Weight;
  // Optimizer state: the other parameters a result is written into, and
  // those results (a new weight is a weight).
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (auto reused = fn.getResultAttrOfType<IntegerAttr>(
            i, KinaDialect::ReusesAttrHelper::getNameStr())) {
      BlockArgument arg = body.getArgument(reused.getInt());
      held.try_emplace(arg, Held::OptimizerState);
      held[ret.getOperand(i)] = held.lookup(arg);
    }
  // A weight's copies are weights: what a collective (ZeRO-3's gather,
  // ZeRO-1's block) or a view (a broadcast, reshape or transpose) makes of
  // one, in the forward or, gathered again, in the backward. Gradients:
  // adjoint values, the collectives that move them, a callee's gradients.
  for (Operation &op : body) {
    auto operandHeld = [&](unsigned i) {
      auto it = held.find(op.getOperand(i));
      return it != held.end() ? std::optional(it->second) : std::nullopt;
    };
    if (isa<CollectiveOpInterface, BroadcastOp, ReshapeOp, TransposeOp>(op) &&
        operandHeld(0) == Held::Weight)
      held.try_emplace(op.getResult(0), Held::Weight);
    if (isAdjointLoc(op.getLoc()) ||
        (isa<CollectiveOpInterface>(op) && operandHeld(0) == Held::Gradient))
      for (Value result : op.getResults())
        held.try_emplace(result, Held::Gradient);
    if (auto call = dyn_cast<func::CallOp>(&op))
      if (func::FuncOp callee = calleeOf(call))
        for (unsigned i : of(callee).gradientResults)
          held.try_emplace(call.getResult(i), Held::Gradient);
  }
  return held;
}

/// Fails, with an error, on an op under `root` (a function, or the module)
/// whose cost is not known yet.
static LogicalResult checkCostable(Operation *root) {
  WalkResult undecided = root->walk([&](Operation *op) {
    if (isa<ReverseModeOp>(op)) {
      op->emitError("kina-cost: differentiate first (--kina-differentiate): "
                    "the cost of a reverseMode is its adjoint's");
      return WalkResult::interrupt();
    }
    for (Type type : op->getResultTypes())
      if (auto tensor = dyn_cast<KinaTensorType>(type);
          tensor && tensor.getPlacement().isAuto()) {
        op->emitError("kina-cost: a placement is not decided: run "
                      "--kina-propagate-sharding first");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(undecided.wasInterrupted());
}

FailureOr<mlir::kina::FunctionCostRecord>
mlir::kina::costRecord(func::FuncOp fn) {
  if (failed(checkCostable(fn)))
    return failure();
  CostModel model(MeshOp::lookup(fn));
  const FunctionCost &cost = model.of(fn);
  mlir::kina::FunctionCostRecord record;
  record.function = fn.getName().str();
  record.location = locationText(fn.getLoc());
  record.flops = cost.flops;
  record.peakBytes = cost.peakBytes;
  record.bytesSent = cost.bytesSent;
  record.atRest = cost.atRest;
  record.atPeak = cost.atPeak;
  record.peakLocation = cost.peakLocation;
  for (auto &[backward, kinds] : cost.traffic)
    for (auto &[key, t] : kinds)
      record.traffic.push_back(
          {backward, key.first, key.second, t.count, t.bytes});
  return record;
}

LogicalResult mlir::kina::remarkCost(func::FuncOp fn,
                                     mlir::kina::CostRecords *records) {
  FailureOr<mlir::kina::FunctionCostRecord> record = costRecord(fn);
  if (failed(record))
    return failure();
  // At the function's location, without the function (as a collective's
  // remark): one located line.
  mlir::emitRemark(fn.getLoc()) << mlir::kina::remarkText(*record);
  if (records)
    records->costs.push_back(std::move(*record));
  return success();
}

namespace {
struct CostPass : mlir::kina::impl::CostPassBase<CostPass> {
  void runOnOperation() override {
    // A call counts its callee's cost: every function is checked before
    // any is said (a reverseMode callee would count as nothing).
    if (failed(checkCostable(getOperation())))
      return signalPassFailure();
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (failed(remarkCost(fn)))
        return signalPassFailure();
  }
};
} // namespace
