//===- Predict.cpp - The time a placed function is predicted to take ------===//

#include "Kina/AutoShard/Predict.h"

#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Reshard.h"
#include "Kina/Sharding/ShardingRules.h"

using namespace mlir;
using namespace mlir::kina;

double mlir::kina::computeSeconds(Operation *op,
                                  ArrayRef<PlacementAttr> operands,
                                  PlacementAttr result, MeshOp mesh,
                                  const MachineModel &machine) {
  SmallVector<SmallVector<int64_t>> operandShapes;
  double bytes = 0;
  auto account = [&](Value value, PlacementAttr placement) {
    auto type = cast<KinaTensorType>(value.getType());
    SmallVector<int64_t> shape =
        blockShape(type.withPlacement(placement), mesh);
    int64_t elements = 1;
    for (int64_t size : shape)
      elements *= size;
    bytes += static_cast<double>(elements) *
             (type.getElementType().getIntOrFloatBitWidth() / 8);
    return shape;
  };
  for (auto [operand, placement] : llvm::zip(op->getOperands(), operands))
    operandShapes.push_back(account(operand, placement));
  SmallVector<int64_t> resultShape = account(op->getResult(0), result);
  double flops = 0;
  if (auto cost = dyn_cast<CostOpInterface>(op))
    flops = static_cast<double>(cost.flops(operandShapes, resultShape));
  return std::max(flops / machine.flopsPerSecond,
                  bytes / machine.memoryBytesPerSecond);
}

double mlir::kina::collectiveSeconds(int kind, int64_t count, int64_t bytes,
                                     const MachineModel &machine) {
  return count * machine.collectives[kind].latency +
         bytes / machine.collectives[kind].bytesPerSecond;
}

int mlir::kina::collectiveKind(Operation *op) {
  StringRef name = op->getName().stripDialect();
  for (int k = 0; k < kNumCollectiveKinds; ++k)
    if (name == kCollectiveKinds[k])
      return k;
  return -1;
}

double mlir::kina::predictSeconds(func::FuncOp fn,
                                  const MachineModel &machine) {
  MeshOp mesh = MeshOp::lookup(fn);
  auto module = fn->getParentOfType<ModuleOp>();
  double seconds = 0;
  fn.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        if (!callee.isExternal())
          seconds += predictSeconds(callee, machine);
      return;
    }
    if (int kind = collectiveKind(op); kind >= 0) {
      if (int64_t bytes = bytesSentPerDevice(op))
        seconds += collectiveSeconds(kind, 1, bytes, machine);
      return;
    }
    // The ops the solver prices: computed per block by a sharding rule.
    if (!mesh || op->getNumResults() != 1 || op->getNumOperands() == 0 ||
        !getShardingRule(op) ||
        !isa<KinaTensorType>(op->getResult(0).getType()) ||
        !placementOf(op->getResult(0)).isMesh())
      return;
    SmallVector<PlacementAttr> operands =
        llvm::map_to_vector(op->getOperands(), placementOf);
    seconds += computeSeconds(op, operands, placementOf(op->getResult(0)),
                              mesh, machine);
  });
  return seconds;
}
