//===- Communication.cpp - What a function's collectives move -------------===//
//
// One remark per function, its collectives grouped by direction (forward,
// or backward for ops an adjoint rule added: located `adjoint of ...`),
// kind and mesh axis, with counts and the bytes each device sends.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Communication.h"
#include "Kina/Sharding/Passes.h"
#include "Kina/Sharding/Reshard.h"

#include <map>

namespace mlir::kina {
#define GEN_PASS_DEF_COMMUNICATIONPASS
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

namespace {
struct Traffic {
  int64_t count = 0, bytes = 0;
};
} // namespace

void mlir::kina::remarkCommunication(func::FuncOp fn) {
  // direction -> "kind over axis" -> traffic, in a stable order.
  std::map<bool, std::map<std::string, Traffic>> traffic;
  int64_t total = 0;
  fn.walk([&](Operation *op) {
    if (!isa<AllGatherOp, AllSliceOp, AllReduceOp, ReduceScatterOp, AllToAllOp>(
            op))
      return;
    auto over = getInherentAttrs(op).getAs<StringAttr>("over");
    std::string key = op->getName().stripDialect().str() + " over " +
                      (over ? over.str() : std::string("?"));
    Traffic &t = traffic[isAdjointLoc(op->getLoc())][key];
    int64_t bytes = bytesSentPerDevice(op);
    t.count += 1;
    t.bytes += bytes;
    total += bytes;
  });
  if (traffic.empty())
    return;
  InFlightDiagnostic remark = fn.emitRemark()
                              << "communication of '" << fn.getName()
                              << "', per device:";
  for (auto &[backward, kinds] : traffic) {
    remark << (backward ? " backward" : " forward");
    bool first = true;
    for (auto &[key, t] : kinds) {
      remark << (first ? " " : ", ") << t.count << " " << key << " (" << t.bytes
             << " B)";
      first = false;
    }
    remark << ";";
  }
  remark << " " << total << " bytes in all";
}

namespace {
struct CommunicationPass
    : mlir::kina::impl::CommunicationPassBase<CommunicationPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp fn) { remarkCommunication(fn); });
  }
};
} // namespace
