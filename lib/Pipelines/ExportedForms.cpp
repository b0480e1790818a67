//===- ExportedForms.cpp - What a shared object is generated from ---------===//
//
// A program without a mesh is exported as it is. A program with one is
// exported twice: as its host form (every function keeps its ABI on
// global tensors) and, for N-device execution, as the per-device form of
// each mesh-placed function, `spmd.NAME` on local blocks with collectives.
//
//===----------------------------------------------------------------------===//

#include "Kina/Pipelines/Pipelines.h"

#include "Kina/Dialect/KinaDialect.h"
#include "Kina/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

/// `pass` run on a copy of `module`.
static FailureOr<OwningOpRef<ModuleOp>> runOnCopy(ModuleOp module,
                                                  std::unique_ptr<Pass> pass) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  PassManager pm(module.getContext());
  pm.addPass(std::move(pass));
  if (failed(pm.run(*copy)))
    return failure();
  return copy;
}

static std::unique_ptr<Pass> partition(StringRef form) {
  mlir::kina::PartitionPassOptions options;
  options.form = form.str();
  return mlir::kina::createPartitionPass(options);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::kina::buildExportedForms(ModuleOp program) {
  // Propagated once: its remarks are said once.
  FailureOr<OwningOpRef<ModuleOp>> propagated =
      runOnCopy(program, createPropagateShardingPass());
  if (failed(propagated))
    return failure();
  FailureOr<OwningOpRef<ModuleOp>> host =
      runOnCopy(**propagated, partition("host"));
  if (failed(host) || !MeshOp::lookup(program))
    return host;
  FailureOr<OwningOpRef<ModuleOp>> devices =
      runOnCopy(**propagated, partition("spmd"));
  if (failed(devices))
    return failure();
  ModuleOp into = **host, from = **devices;
  for (auto fn : llvm::to_vector(from.getOps<func::FuncOp>())) {
    auto name = StringAttr::get(fn.getContext(),
                                kPerDeviceSymbolPrefix + fn.getName().str());
    if (failed(SymbolTable::replaceAllSymbolUses(fn, name, from)))
      return fn.emitError("internal error: cannot rename to ") << name;
    fn.setName(name);
  }
  // The host form has no mesh left; the collectives need it.
  for (Operation &op : llvm::make_early_inc_range(*from.getBody()))
    op.moveBefore(into.getBody(), into.getBody()->end());
  return host;
}
