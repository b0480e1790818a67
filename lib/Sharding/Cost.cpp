//===- Cost.cpp - What a function computes, holds and sends ---------------===//
//
// The static cost view, one remark per function, before anything runs:
// the arithmetic each op declares (CostOpInterface), the peak of the
// buffers live at once, and what the collectives send. A value is live
// from the op that makes it to its last use (arguments throughout): the
// program order before fusion, which fusion and in-place updates only
// lower. A call adds its callee's FLOPs, collectives and, while it runs,
// its temporaries.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Cost.h"
#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Passes.h"
#include "Kina/Sharding/Reshard.h"

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
};

class CostModel {
public:
  explicit CostModel(MeshOp mesh) : mesh(mesh) {}

  const FunctionCost &of(func::FuncOp fn);

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
  for (BlockArgument arg : body.getArguments())
    cost.argumentBytes += bytesOf(arg);
  int64_t live = cost.argumentBytes;
  cost.peakBytes = live;
  for (Operation &op : body) {
    int64_t during = 0; // a callee's temporaries while it runs
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
    for (Value result : op.getResults())
      live += bytesOf(result);
    cost.peakBytes = std::max(cost.peakBytes, live + during);
    for (Value operand : op.getOperands())
      if (!isa<BlockArgument>(operand) && lastUse.lookup(operand) == &op)
        live -= bytesOf(operand);
    for (Value result : op.getResults())
      if (result.use_empty())
        live -= bytesOf(result);
  }
  return known[fn] = cost;
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
