//===- PartitionPass.cpp - The --kina-partition pass ----------------------===//
//
// `form=host`: the host form of every function (PartitionHost.cpp);
// `form=spmd`: the per-device form of each mesh-placed function
// (PartitionSpmd.cpp), the host-only functions dropped.
//
//===----------------------------------------------------------------------===//

#include "Kina/Sharding/Partition.h"
#include "Kina/Sharding/Passes.h"

namespace mlir::kina {
#define GEN_PASS_DEF_PARTITIONPASS
#include "Kina/Sharding/Passes.h.inc"
} // namespace mlir::kina

using namespace mlir;
using namespace mlir::kina;

namespace {
struct PartitionPass : mlir::kina::impl::PartitionPassBase<PartitionPass> {
  using PartitionPassBase::PartitionPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (form != "host" && form != "spmd") {
      module.emitError() << "kina-partition: option 'form' is host or spmd, "
                            "got '"
                         << form << "'";
      return signalPassFailure();
    }
    MeshOp mesh = MeshOp::lookup(module);
    if (!mesh)
      return; // nothing to partition
    for (auto fn : module.getOps<func::FuncOp>())
      if (anyPlacement(fn.getFunctionType(),
                       [](PlacementAttr p) { return p.isLocal(); })) {
        fn.emitError("kina-partition: '")
            << fn.getName()
            << "' is already per-device (@local): partition a program once";
        return signalPassFailure();
      }
    if (form == "host") {
      if (failed(partitionHost(module, mesh)))
        signalPassFailure();
      return;
    }
    // Functions on the host (an @main with host placeholders) are the host
    // form's; the per-device program is the mesh-placed functions.
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!anyPlacement(fn.getFunctionType(),
                        [](PlacementAttr p) { return p.isMesh(); }))
        fn.erase();
      else if (failed(partitionSpmd(fn, mesh)))
        return signalPassFailure();
    }
  }
};
} // namespace
